/**
 * The server's name for a code file: what stack traces, load problems (`location.file`) and a
 * debugger show for a reactor's code or a proxy's transform. It is made from the resource's name,
 * not from the file the user sent, which the server never learns.
 */
export function reactorFileName(name: string): string {
  return `${name.replace(/[^A-Za-z0-9_.-]+/g, '-').replace(/^-+|-+$/g, '') || 'reactor'}.js`;
}

/** A proxy's request or response transform: `stripe-request-transform.js` for proxy stripe. */
export function transformFileName(proxyName: string, kind: 'request' | 'response'): string {
  return reactorFileName(`${proxyName}-${kind}-transform`);
}
