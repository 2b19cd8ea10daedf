/** SQL text helpers the seeds and floors share; nothing of src/ (a floor imports none of it). */

/** An ISO 8601 UTC timestamp with milliseconds in SQL, as the service's JSON has them. */
export const iso = (value: string): string => `to_char(${value} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
