/**
 * The TLS options of a request of user code, as its `https.request` gave them: Node's defaults for
 * everything left out (the system's CAs, verification on). The sandbox sends them over its channel
 * (runtime/), the emulator makes the connection with them (emulator/outbound/).
 */
export interface UserTlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  passphrase?: string;
  ciphers?: string;
  servername?: string;
  minVersion?: string;
  maxVersion?: string;
  rejectUnauthorized?: boolean;
  family?: 4 | 6;
}
