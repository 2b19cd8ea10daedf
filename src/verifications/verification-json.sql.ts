/**
 * A verification as the contract's JSON text, written by PostgreSQL, so that the list and detail
 * routes' Node side only joins texts (docs/performance.md, "What is in place": the list page written by PostgreSQL).
 * Select-list expressions over a verification row's columns only: the statements that use them are
 * verification.repository.ts's.
 *
 * It MUST agree with toVerificationResponse and toVerificationDetail (verification.mapper.ts): the
 * same fields in the same order, the same values, and the bytes JSON.stringify writes for them
 * (metadata keys excepted: jsonb's order, see METADATA_JSON). test/verification-json.e2e-spec.ts
 * checks both on random rows; change the two together.
 *
 * Built by concatenating to_json(...)::text pieces rather than json_build_object, which writes
 * `"k" : v, ` with spaces and cost more (docs/performance.md, "Tried and rejected").
 */

/** A timestamptz as JS toISOString() writes it: UTC, milliseconds (the columns are timestamptz(3)). */
export function isoTextSql(column: string): string {
  return `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
}

/** Its text needs no JSON escaping, so quotes suffice. */
const isoJson = (column: string): string => `'"' || ${isoTextSql(column)} || '"'`;
const isoJsonOrNull = (column: string): string => `coalesce(${isoJson(column)}, 'null')`;

/** A jsonb field's value as JSON text (jsonb escapes strings as to_json does); null when missing. */
const fieldJson = (object: string, key: string): string => `coalesce((${object}->'${key}')::text, 'null')`;

/** SQL NULL or JSON null: the mapper answers null for both. */
const isNull = (column: string): string => `${column} IS NULL OR ${column} = 'null'::jsonb`;

const APPLICANT_JSON = `CASE WHEN ${isNull('applicant')} THEN 'null' ELSE
  '{"first_name":' || ${fieldJson('applicant', 'first_name')}
  || ',"last_name":' || ${fieldJson('applicant', 'last_name')}
  || ',"date_of_birth":' || ${fieldJson('applicant', 'date_of_birth')}
  || ',"email":' || ${fieldJson('applicant', 'email')} || '}' END`;

const DOCUMENT_JSON = `CASE WHEN ${isNull('document')} THEN 'null' ELSE
  '{"type":' || ${fieldJson('document', 'type')} || ',"country":' || ${fieldJson('document', 'country')} || '}' END`;

/**
 * jsonb's own text has a space after every colon and comma; json_strip_nulls re-emits it compact, in
 * jsonb's key order (byte length, then bytes; JS would put integer-like keys such as "10" first).
 * metadata is a flat map of strings (the contract), so no null is there to strip.
 */
const METADATA_JSON = `json_strip_nulls(metadata::json)::text`;

/**
 * The object's text without its closing brace, over the unqualified columns of `verifications`.
 * Every piece is non-null (a NULL anywhere in a `||` chain would null the whole text), hence the
 * coalesces.
 */
const FIELDS_JSON = `'{"id":"' || id
  || '","object":"verification","external_user_id":' || to_json(external_user_id)::text
  || ',"status":' || to_json(status)::text
  || ',"version":' || version
  || ',"created_at":' || ${isoJson('created_at')}
  || ',"updated_at":' || ${isoJson('updated_at')}
  || ',"submitted_at":' || ${isoJsonOrNull('submitted_at')}
  || ',"decided_at":' || ${isoJsonOrNull('decided_at')}
  || ',"applicant":' || ${APPLICANT_JSON}
  || ',"document":' || ${DOCUMENT_JSON}
  || ',"rejection_reasons":' || array_to_json(rejection_reasons)::text
  || ',"metadata":' || ${METADATA_JSON}
  || ',"redacted_at":' || ${isoJsonOrNull('redacted_at')}`;

/** toVerificationResponse's text. */
export const VERIFICATION_JSON_SQL = `${FIELDS_JSON} || '}'`;

/**
 * toVerificationDetail's text: the verification's own, then `historyJson`, its status_history as
 * JSON text (the history repository's fragment).
 */
export function verificationDetailJsonSql(historyJson: string): string {
  return `${FIELDS_JSON} || ',"status_history":' || ${historyJson} || '}'`;
}

/** A list page's row: the verification's JSON text and its cursor key (the sort column's ISO text, the id). */
export interface VerificationJsonRow {
  id: string;
  cursor_at: string;
  json: string;
}

/** The select list of a VerificationJsonRow whose cursor key is on `sortColumn`. */
export function verificationJsonColumns(sortColumn: string): string {
  return `id, ${isoTextSql(sortColumn)} AS cursor_at, ${VERIFICATION_JSON_SQL} AS json`;
}
