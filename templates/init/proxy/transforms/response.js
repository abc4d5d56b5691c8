/**
 * The response transform of the `payments` proxy: gets the destination's answer as
 * `req.args` = { body, headers } (a JSON body parsed) and returns the { body, headers } the caller
 * receives. The status stays the destination's.
 */
module.exports = async function (req) {
  const { body } = req.args;
  return {
    headers: { 'Content-Type': 'application/json' },
    // Only what the caller needs: never echo card data back.
    body: { ok: true, received: typeof body === 'object' && body !== null ? Object.keys(body).sort() : [] },
  };
};
