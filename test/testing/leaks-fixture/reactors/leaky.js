// Hands the card it got back to its caller, in base64: a leak.
module.exports = async function (req) {
  return { raw: { card: Buffer.from(req.args.card.number).toString('base64') } };
};
