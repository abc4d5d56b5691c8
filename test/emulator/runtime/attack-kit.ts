/**
 * What the boundary tests attack with: user-code fragments (as source text) and the real local
 * servers and OS-level looks they need (listeners to aim at, a TLS server, a process's fds).
 */
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import https from 'node:https';
import net, { type AddressInfo } from 'node:net';
import path from 'node:path';
import { onTestFinished } from 'vitest';
import { tempDir } from '../../helpers/temp.js';
import { selfSigned } from '../../helpers/tls.js';

/**
 * Statements that fill `found` with the objects Node itself queued as arguments of its own
 * setImmediate/setTimeout calls, by walking the timer lists from a handle of user code
 * (`_idlePrev`/`_idleNext`, `_argv`/`_timerArgs`). Closing a TLS socket queues
 * `setImmediate(destroySSL, socket)`, so HTTPS requests to `req.args.closingPort` (a server that
 * drops every connection) put the real TLSSocket there. Leaves `TLSSocket` and `NetSocket`
 * (undefined when nothing was found).
 */
export const CAPTURE_QUEUED = `
  const found = [];
  const look = () => {
    const handles = [setImmediate(() => {}), setTimeout(() => {}, 1)];
    for (const mine of handles) {
      for (const step of ['_idlePrev', '_idleNext']) {
        for (let p = mine[step]; p && p !== mine; p = p[step]) {
          for (const arg of [...(p._argv || []), ...(p._timerArgs || [])]) if (arg && typeof arg === 'object') found.push(arg);
        }
      }
    }
    clearImmediate(handles[0]);
    clearTimeout(handles[1]);
  };
  const poll = setInterval(look, 0);
  for (let i = 0; i < 10 && found.length === 0; i++) {
    await new Promise((resolve) => {
      const r = require('https').get('https://127.0.0.1:' + req.args.closingPort + '/', resolve);
      r.on('error', resolve);
    });
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  clearInterval(poll);
  const TLSSocket = found.find((o) => o && o.constructor && o.constructor.name === 'TLSSocket')?.constructor;
  const NetSocket = TLSSocket && Object.getPrototypeOf(TLSSocket.prototype).constructor;
`;

/**
 * An expression: a breadth-first walk over own properties (getters called), symbols and
 * prototypes of `roots` (an array of [name, value]), answering the paths at which it met a
 * Node network object (a socket, a server, a native handle, a real ClientRequest or agent).
 */
/**
 * Statements (after CAPTURE_QUEUED) that try to listen through the native TCP and Pipe handles behind
 * a TLSSocket: on TCP port 0 (the port lands in `out.port`) and on the path `req.args.path`.
 * Each failure is kept as the error's name in `out.tcp` / `out.pipe`.
 */
export const LISTEN_THROUGH_HANDLES = `
  try {
    const tcp = new TLSSocket(null, {})._handle._parent;
    const server = new tcp.constructor(1);
    server.bind('127.0.0.1', 0);
    server.listen(8);
    const name = {};
    server.getsockname(name);
    out.port = name.port;
  } catch (e) { out.tcp = e.name; }
  try {
    const pipe = new TLSSocket(null, { pipe: true })._handle._parent;
    const server = new pipe.constructor(1);
    out.pipe = [server.bind(req.args.path), server.listen(8)];
  } catch (e) { out.pipe = e.name; }
`;

export const FIND_NETWORK_OBJECTS = `((roots) => {
  const NAMES = new Set(['Socket', 'TLSSocket', 'Server', 'TCP', 'Pipe', 'TLSWrap', 'ClientRequest', 'IncomingMessage', 'HTTPParser', 'TCPConnectWrap']);
  const seen = new Set();
  const queue = roots.map(([name, root]) => [root, name]);
  const found = [];
  for (let i = 0; i < queue.length && seen.size < 100000; i++) {
    const [o, at] = queue[i];
    if ((typeof o !== 'object' && typeof o !== 'function') || o === null || seen.has(o)) continue;
    seen.add(o);
    let name;
    try { name = typeof o === 'function' ? o.name : o.constructor && o.constructor.name; } catch {}
    if (NAMES.has(name) || (typeof o === 'object' && Object.prototype.hasOwnProperty.call(o, '_handle'))) found.push(at + ' (' + name + ')');
    try { queue.push([Object.getPrototypeOf(o), at + '.__proto__']); } catch {}
    let keys = [];
    try { keys = Reflect.ownKeys(o); } catch {}
    for (const k of keys) {
      let d;
      try { d = Object.getOwnPropertyDescriptor(o, k); } catch { continue; }
      if (!d) continue;
      const p = at + '.' + String(k);
      if ('value' in d) queue.push([d.value, p]);
      else {
        queue.push([d.get, p + '<get>'], [d.set, p + '<set>']);
        try { if (d.get) queue.push([Reflect.apply(d.get, o, []), p]); } catch {}
      }
    }
  }
  return { found, walked: seen.size };
})`;

/** Ports that count the connections they get (and drop them): a TCP port and a Unix socket. */
export async function listeners() {
  const dir = await tempDir('svc-boundary-');
  const counts = { tcp: 0, unix: 0 };
  const tcp = net.createServer((socket) => {
    counts.tcp++;
    socket.destroy();
  });
  const unixPath = path.join(dir, 'target.sock');
  const unix = net.createServer((socket) => {
    counts.unix++;
    socket.destroy();
  });
  await Promise.all([
    new Promise<void>((resolve) => tcp.listen(0, '127.0.0.1', resolve)),
    new Promise<void>((resolve) => unix.listen(unixPath, resolve)),
  ]);
  onTestFinished(() =>
    Promise.all([new Promise((resolve) => tcp.close(resolve)), new Promise((resolve) => unix.close(resolve))]).then(
      () => undefined,
    ),
  );
  return {
    counts,
    tcpPort: (tcp.address() as AddressInfo).port,
    unixPath,
    /** A path in a fresh folder where no file exists: user code must not be able to make one. */
    freshPath: path.join(dir, 'made-by-user-code.sock'),
    /** The fd of the TCP listener in this process (the emulator's, as far as the sandbox is concerned). */
    tcpFd: (tcp as unknown as { _handle: { fd: number } })._handle.fd,
    dir,
  };
}

/** A TCP port that accepts and at once drops every connection: each TLS socket to it closes. */
export async function closingPort(): Promise<number> {
  const server = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return (server.address() as AddressInfo).port;
}

/** A real HTTPS server on 127.0.0.1 with a throwaway self-signed certificate (openssl); `onRequest` hears each path. */
export async function tlsServer(onRequest?: (path: string) => void): Promise<{ port: number; ca: string }> {
  const { key, cert: ca } = await selfSigned();
  const server = https.createServer({ key, cert: ca }, (request, response) => {
    onRequest?.(request.url ?? '');
    response.setHeader('content-type', 'text/plain');
    response.end(`answered ${request.url}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  onTestFinished(() => {
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return { port: (server.address() as AddressInfo).port, ca };
}

/** What each open fd of a process points at (`socket:[inode]`, `/dev/null`, `pipe:[inode]`). */
export function fdTargets(pid: number): Map<number, string> {
  const targets = new Map<number, string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      targets.set(Number(fd), readlinkSync(`/proc/${pid}/fd/${fd}`));
    } catch {
      // closed while we looked
    }
  }
  return targets;
}

/** The listening sockets (TCP and Unix) among a process's fds: user code must never own one. */
export function listeningSockets(pid: number): string[] {
  const listening = new Set<string>();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[3] === '0A' && fields[9]) listening.add(fields[9]);
    }
  }
  for (const line of readFileSync(`/proc/${pid}/net/unix`, 'utf8').split('\n').slice(1)) {
    const fields = line.trim().split(/\s+/);
    if (fields[3] && (parseInt(fields[3], 16) & 0x10000) !== 0 && fields[6]) listening.add(fields[6]);
  }
  return [...fdTargets(pid).values()].filter((target) => listening.has(/^socket:\[(\d+)\]$/.exec(target)?.[1] ?? ''));
}

/** Whether a TCP port on 127.0.0.1 accepts a connection (a listener user code must not have). */
export function accepts(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    socket.on('connect', () => (socket.destroy(), resolve(true)));
    socket.on('error', () => resolve(false));
  });
}
