import { SVC_METHODS, type FromSandbox, type SerializedError } from './protocol.js';
import { isHttpsMessage } from './outbound-requests.js';
import { isRecord } from '../../lib/is-record.js';

/**
 * A sandbox's message, checked against the protocol before the emulator acts on it: a sandbox runs
 * untrusted code, and is trusted to send nothing in particular. Throws with what is wrong.
 */
export function checkedMessage(message: unknown): FromSandbox {
  if (!isRecord(message) || typeof message.type !== 'string') throw new Error('a message is not an object with a type');
  const m = message;
  const type = message.type;
  const ok = (() => {
    switch (m.type) {
      case 'booted':
        return true;
      case 'loaded':
        return isString(m.vid);
      case 'load-error':
        return isString(m.vid) && isError(m.error);
      case 'result':
        return isId(m.id) && (m.ok === true ? 'value' in m : m.ok === false && isError(m.error));
      case 'busy':
        return isId(m.id) && (m.tampered === undefined || typeof m.tampered === 'boolean');
      case 'log':
        return (
          (m.id === null || isId(m.id)) &&
          (m.vid === null || isString(m.vid)) &&
          LEVELS.has(m.level as string) &&
          isString(m.text)
        );
      case 'rpc':
        return (
          isId(m.id) &&
          isId(m.invocation) &&
          (SVC_METHODS as readonly unknown[]).includes(m.method) &&
          isString(m.params)
        );
      case 'probe':
        return isId(m.seq) && isNumber(m.idleCpuMs) && isNumber(m.idleWallMs);
      case 'https':
      case 'https-body':
      case 'https-read':
      case 'https-abort':
        return isHttpsMessage(m);
      default:
        return false;
    }
  })();
  if (!ok) throw new Error(`a "${type.slice(0, 40)}" message is not as the protocol has it`);
  return m as unknown as FromSandbox;
}

const LEVELS = new Set(['log', 'info', 'warn', 'error', 'debug']);
const KINDS = new Set(['user', 'load', 'result']);

function isError(value: unknown): value is SerializedError {
  if (!isRecord(value) || !KINDS.has(value.kind as string) || !isString(value.name) || !isString(value.message))
    return false;
  if (value.status !== undefined && !isId(value.status)) return false;
  if (value.stack !== undefined && !isString(value.stack)) return false;
  if (value.location !== undefined && !isString(value.location)) return false;
  if (value.errors !== undefined && !isErrorLists(value.errors)) return false;
  if (value.custom === undefined) return true;
  const custom = value.custom;
  return (
    isRecord(custom) &&
    (typeof custom.status === 'number' || custom.status === null) &&
    isRecord(custom.headers) &&
    Object.values(custom.headers).every(isString)
  );
}

/** A reactor error's `errors`: string lists by key. */
function isErrorLists(value: unknown): value is Record<string, string[]> {
  return isRecord(value) && Object.values(value).every((list) => Array.isArray(list) && list.every(isString));
}

function isString(value: unknown): value is string {
  return typeof value === 'string';
}

function isNumber(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}

function isId(value: unknown): value is number {
  return Number.isSafeInteger(value);
}
