import { MAX_NAME_LENGTH } from '../../../api/limits.js';
import type { Proxy } from '../../../api/types.js';
import { readCodeFile } from '../../../requests/files.js';
import { sentTransform, type SentCode } from '../../io/code-paths.js';
import type { IO } from '../../io/process.js';
import type { Output } from '../../io/output.js';

export const proxyArg = { name: 'proxy', description: 'proxy id or exact name' } as const;

/** The flags create, update and patch share. */
export const proxyOptions = [
  { flags: '--name <name>', description: `name (up to ${MAX_NAME_LENGTH} characters)` },
  { flags: '--destination-url <url>', description: 'where requests are forwarded (absolute http/https URL)' },
  { flags: '--request-transform <file>', description: 'code run on each request before it is forwarded' },
  { flags: '--response-transform <file>', description: "code run on the destination's response" },
  { flags: '--configuration <pair>', description: 'KEY=VALUE, or @file.env (repeatable)', repeatable: true },
  {
    flags: '--application <application>',
    description: 'Application (id or name) for the transforms and anonymous detokenization',
  },
  { flags: '--require-auth', description: 'callers must send an API key with token:use (the default)' },
  { flags: '--no-require-auth', description: 'accept anonymous callers' },
] as const;

/** A transform flag: the code of the file it names, `null` for `--no-...-transform`, or not given. */
export async function transformCode(value: string | false | undefined, io: IO): Promise<string | null | undefined> {
  if (value === undefined) return undefined;
  return value === false ? null : readCodeFile(value, io.cwd);
}

/** The transform files the flags name, so that a transform that does not load is named by its local path. */
export function sentTransforms(options: {
  requestTransform?: string | false;
  responseTransform?: string | false;
}): (SentCode | undefined)[] {
  return [sentTransform(options.requestTransform, 'request'), sentTransform(options.responseTransform, 'response')];
}

export async function showProxy(output: Output, proxy: Proxy): Promise<void> {
  await output.fields([
    ['id', proxy.id],
    ['name', proxy.name],
    ['key', proxy.key],
    ['destination', proxy.destination_url],
    ['require auth', String(proxy.require_auth)],
    [
      'transforms',
      [proxy.request_transform && 'request', proxy.response_transform && 'response'].filter(Boolean).join(', ') ||
        '(none)',
    ],
    ['application', proxy.application_id ?? '(none)'],
    ['configuration', Object.keys(proxy.configuration ?? {}).join(', ') || '(none)'],
    ['modified', proxy.modified_at],
  ]);
}

/** The flags that remove what update and patch would otherwise keep. */
export const noTransforms = [
  { flags: '--no-request-transform', description: 'remove the request transform' },
  { flags: '--no-response-transform', description: 'remove the response transform' },
  { flags: '--no-application', description: 'unbind the Application' },
] as const;
