/**
 * ANSI styles for text the CLI paints itself, when colour is asked for (a terminal without NO_COLOR,
 * no --no-color). Each style is closed by its own reset, so a painted part nests in another.
 */
const ANSI = { bold: [1, 22], dim: [2, 22], red: [31, 39], green: [32, 39], yellow: [33, 39], cyan: [36, 39] } as const;
export type Style = keyof typeof ANSI;
export type Paint = (style: Style, text: string) => string;

/** A painter that colours with `color`, else returns the text as it is. */
export function painter(color: boolean): Paint {
  return (style, text) => (color ? `\u001b[${ANSI[style][0]}m${text}\u001b[${ANSI[style][1]}m` : text);
}
