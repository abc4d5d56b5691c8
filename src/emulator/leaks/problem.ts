import type { LeakPlace } from '../../api/events.js';
import { PROBLEM_TYPES } from '../../api/problem.js';
import { HttpError } from '../errors.js';
import type { Finding, LeakCall } from './guard.js';

/** The answer of a call refused in fail mode: what was found where, never the value. */
export function leakProblem(call: LeakCall, place: LeakPlace, found: Finding[]): HttpError {
  const what = found
    .map((finding) =>
      finding.tokenId !== undefined
        ? `token ${finding.tokenId} (${finding.form})`
        : `a card number ending ${finding.last4} from no token`,
    )
    .filter((text, at, all) => all.indexOf(text) === at)
    .join(', ');
  const who = call.kind === 'reactor' ? `Reactor ${call.name}` : `Proxy ${call.name}`;
  return new HttpError(
    500,
    `${who}: ${PLACE_WORDS[place]} held the plaintext of ${what}; refused by the leak guard (fail mode).`,
    {
      title: 'Plaintext leak',
      type: PROBLEM_TYPES.leak,
      extensions: {
        leaks: found.map((finding) => ({
          place,
          form: finding.form,
          ...(finding.tokenId !== undefined && { token_id: finding.tokenId }),
          ...(finding.last4 !== undefined && { last4: finding.last4 }),
        })),
      },
    },
  );
}

const PLACE_WORDS: Record<LeakPlace, string> = {
  console: 'a console line',
  log: 'the log',
  event: 'an event',
  error: 'the error it failed with',
  raw: 'the raw result',
  answer: 'the answer to its caller',
  outbound: "its code's request to another host",
  recording: 'a recording',
};

/** Headers as the lines they are sent as (`name: value`), for a check. */
export function headerText(headers: Record<string, string | string[] | undefined>): string {
  let text = '';
  for (const name in headers) {
    const value = headers[name];
    text += `${name}: ${Array.isArray(value) ? value.join(', ') : (value ?? '')}\n`;
  }
  return text;
}
