import { ApiError } from 'src/common/api-error';

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/i;

function isCalendarDate(day: string): boolean {
  const date = new Date(`${day}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === day;
}

/** ISO 8601 date or date-time; a date-time without a zone is read as UTC. */
export function parseTimestamp(field: string, raw: string): Date {
  const dateTime = DATE_TIME.exec(raw);
  if ((!dateTime && !DATE_ONLY.test(raw)) || !isCalendarDate(raw.slice(0, 10))) {
    throw ApiError.validation(field, 'must be an ISO 8601 date-time');
  }
  const text = !dateTime ? `${raw}T00:00:00Z` : dateTime[1] ? raw : `${raw}Z`;
  const date = new Date(text);
  if (Number.isNaN(date.getTime())) throw ApiError.validation(field, 'must be an ISO 8601 date-time');
  // Stored values are whole milliseconds and Date truncates finer digits; rounding a sub-millisecond
  // bound up keeps both `from >= x` and `to < x` exact against millisecond values.
  const subMillis = /\.\d{3}(\d+)/.exec(raw)?.[1];
  return subMillis && /[1-9]/.test(subMillis) ? new Date(date.getTime() + 1) : date;
}

/** An optional query or body field: absent stays undefined, anything given must parse. */
export function optionalTimestamp(field: string, raw: string | undefined): Date | undefined {
  return raw === undefined ? undefined : parseTimestamp(field, raw);
}

export function checkRange(fromField: string, from: Date | undefined, toField: string, to: Date | undefined): void {
  if (from && to && from.getTime() > to.getTime()) {
    throw ApiError.validation(fromField, `must not be after ${toField}`);
  }
}
