import { forTerminal } from 'src/cli/terminal-text';

describe('forTerminal', () => {
  it.each([
    ['ESC', 'a\u001B[31mred', 'a\\u001b[31mred'],
    ['BEL and NUL', '\u0007\u0000', '\\u0007\\u0000'],
    ['tab and carriage return', 'a\tb\rc', 'a\\u0009b\\u000dc'],
    ['DEL and C1 (CSI U+009B, NEL U+0085)', '\u007F\u009B2J\u0085', '\\u007f\\u009b2J\\u0085'],
    ['a lone surrogate', 'x\uD800y', 'x\\ud800y'],
  ])('escapes %s', (_name, text, shown) => {
    expect(forTerminal(text)).toBe(shown);
  });

  it('keeps line breaks and ordinary text, emoji and RTL included', () => {
    const text = 'Zoë 😀 שלום\n  "name": "Acme"\n';
    expect(forTerminal(text)).toBe(text);
  });

  it('keeps JSON output valid and decoding to the stored value', () => {
    const stored = { name: 'Evil\u001B]0;pwned\u0007 \u009B31m\u007F' };
    const shown = forTerminal(JSON.stringify(stored, null, 2));
    const codes = [...shown].map((char) => char.codePointAt(0) ?? 0);
    expect(codes.filter((code) => code !== 0x0a && (code <= 0x1f || (code >= 0x7f && code <= 0x9f)))).toEqual([]);
    expect(JSON.parse(shown)).toEqual(stored);
  });
});
