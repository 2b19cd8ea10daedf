// Every control character but the line break, and unpaired surrogate halves.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNSAFE = /[\u0000-\u0009\u000B-\u001F\u007F-\u009F]|\p{Surrogate}/gu;

/**
 * Text for an operator's terminal: rows stored before control characters were refused may hold
 * escape sequences, so each one is shown as a JSON-style `\u001b` escape (JSON output stays valid
 * and decodes to the stored value). Line breaks are the output's own layout and are kept.
 */
export function forTerminal(text: string): string {
  return text.replace(UNSAFE, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
