/** A comma-separated list of the given values (`a,b`), for a DTO's `@Matches`, built from the constant. */
export function commaListOf(values: readonly string[]): RegExp {
  const one = `(${values.map((value) => value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})`;
  return new RegExp(`^${one}(,${one})*$`);
}

/** Each value once and sorted, so a cursor's scope does not depend on how the client wrote the list. */
export function parseCommaList(raw: string | undefined): string[] | undefined {
  return raw ? [...new Set(raw.split(','))].sort() : undefined;
}
