// Sends args.body to args.url with https (args.ca trusts a loopback destination); with args.handle,
// a failed request is answered as data instead of failing the call.
const https = require('node:https');

function send(url, { method = 'POST', body, ca }) {
  return new Promise((resolve, reject) => {
    const request = https.request(url, { method, ca, headers: { 'content-type': 'application/json' } }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk) => (text += chunk));
      response.on('end', () => resolve({ status: response.statusCode, type: response.headers['content-type'], text }));
      response.on('error', reject);
    });
    request.on('error', reject);
    if (body === undefined) return request.end();
    // Written over several turns: the emulator reads a body that streams.
    const text = JSON.stringify(body);
    const third = Math.ceil(text.length / 3);
    request.write(text.slice(0, third));
    setTimeout(() => {
      request.write(text.slice(third, 2 * third));
      setTimeout(() => request.end(text.slice(2 * third)), 5);
    }, 5);
  });
}

module.exports = async function (req) {
  const { url, method, body, ca, handle } = req.args;
  if (!handle) return { raw: await send(url, { method, body, ca }) };
  try {
    return { raw: await send(url, { method, body, ca }) };
  } catch (error) {
    return { raw: { error: error.message, code: error.code } };
  }
};
