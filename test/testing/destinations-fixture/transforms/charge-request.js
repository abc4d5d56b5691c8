// Gets a bearer token from the auth server, then sends the body on marked as transformed.
const https = require('node:https');

function accessToken() {
  return new Promise((resolve, reject) => {
    const request = https.request('https://auth.example.com/oauth/token', { method: 'POST' }, (response) => {
      let text = '';
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve(JSON.parse(text).access_token));
    });
    request.on('error', reject);
    request.end('grant_type=client_credentials');
  });
}

module.exports = async function (req) {
  const token = await accessToken();
  return {
    headers: { ...req.args.headers, 'Content-Type': 'application/json', Authorization: `Bearer ${token}` },
    body: { ...req.args.body, transformed: true },
  };
};
