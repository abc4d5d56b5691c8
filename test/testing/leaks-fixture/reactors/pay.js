// Sends the card to the payment provider: a leak unless its host is declared (allowHosts).
const https = require('node:https');

module.exports = async function (req) {
  const status = await new Promise((resolve, reject) => {
    const request = https.request(
      {
        hostname: 'api.pay.example',
        path: '/charges',
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      },
    );
    request.on('error', reject);
    request.end(JSON.stringify({ number: req.args.card.number, amount: 1250 }));
  });
  return { raw: { status } };
};
