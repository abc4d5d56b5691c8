/**
 * The request transform of the `payments` proxy. A call to the proxy (`svc invoke proxy payments`,
 * or POST /proxy with SVC-PROXY-KEY) has its `{{ token }}` expressions detokenized first; then
 * this function gets `req.args` = { body, headers, method, path, query } and returns the
 * { body, headers } to forward to the destination. `req.configuration` comes from svc.yaml.
 */
module.exports = async function (req) {
  const { body, headers } = req.args;
  return {
    headers: {
      ...headers,
      'Content-Type': 'application/json',
      Authorization: `Bearer ${req.configuration.PAYMENTS_API_KEY}`,
    },
    body: { ...body, source: 'svc-proxy' },
  };
};
