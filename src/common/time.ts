/** Contract timestamps: ISO 8601 UTC with milliseconds, or null. */
export function iso(value: Date): string;
export function iso(value: Date | null): string | null;
export function iso(value: Date | null): string | null {
  return value === null ? null : value.toISOString();
}
