module.exports = async function () {
  return { raw: { ok: true } };
};
