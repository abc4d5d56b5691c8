// A stand-in for the payments API, on this machine: it answers every request with what it received,
// as httpbin's /anything does. svc.yaml's proxy forwards to it, so `svc serve` and
// `svc invoke proxy payments` work with no internet. Run it in a terminal of its own:
//
//   node destination.js            # http://127.0.0.1:8791 (PORT=... for another port)
//
// The tests do not need it: they mock the destination inside the emulator (test/transforms.test.js).
const http = require('node:http');

const port = Number(process.env.PORT ?? 8791);

const server = http.createServer((request, response) => {
  const chunks = [];
  request.on('data', (chunk) => chunks.push(chunk));
  request.on('end', () => {
    const data = Buffer.concat(chunks).toString('utf8');
    let json = null;
    try {
      json = JSON.parse(data);
    } catch {
      // not JSON: `data` has it as text
    }
    const answer = { method: request.method, url: request.url, headers: request.headers, data, json };
    response.writeHead(200, { 'Content-Type': 'application/json' });
    response.end(JSON.stringify(answer));
    console.log(`${request.method} ${request.url} ${data.length} bytes`);
  });
});

server.listen(port, '127.0.0.1', () => {
  console.log(`destination listening on http://127.0.0.1:${server.address().port}`);
});
