// Stamps the forwarded request with the time the transform reads.
module.exports = async function (req) {
  return { headers: { ...req.args.headers, 'x-now': String(Date.now()) }, body: req.args.body };
};
