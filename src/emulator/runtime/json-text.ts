/**
 * A value written out as JSON already (a reactor's args, measured as they are sent): the invoke
 * frame takes its text as it is, so that the value is serialised once per call.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/**
 * The JSON of an invoke frame: `fields` written out, with `args` put in as text when it is a
 * JsonText (JSON.stringify would write it again, as a string).
 */
export function frameJson(fields: Record<string, unknown> & { args: unknown }): string {
  const { args } = fields;
  if (!(args instanceof JsonText)) return JSON.stringify(fields);
  const { args: _text, ...rest } = fields;
  const json = JSON.stringify(rest);
  return `${json.slice(0, -1)},"args":${args.text}}`;
}
