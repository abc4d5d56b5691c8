/** The outbound gateway: the one place requests leave the emulator (see gateway.ts). */
export { OutboundGateway } from './gateway.js';
export { BODY_TIMEOUT_MS, HEADERS_TIMEOUT_MS, type ForwarderOptions } from './forwarder.js';
export type {
  OutboundInterceptor,
  OutboundNext,
  OutboundOrigin,
  OutboundRequest,
  OutboundResponse,
  OutboundTls,
} from './types.js';
