/**
 * The two aged pools, by age (days since `decided_at`). The service's pass runs with
 * PII_RETENTION_DAYS=30 and so sees only its own pool; the floor redacts the rows aged between
 * FLOOR_SELECTS_FROM_DAYS and PII_RETENTION_DAYS, so neither takes the other's rows and each redacts
 * the same number of rows of the same shape. Both pools are younger than the default
 * WEBHOOK_EVENT_RETENTION_DAYS (90): the pass deletes no event, its deletion step finds nothing.
 */
export interface AgeWindow {
  name: string;
  minDays: number;
  maxDays: number;
  /** Keeps the two pools' hashed attributes apart. */
  salt: number;
}

export const PII_RETENTION_DAYS = 30;
/** The floor's rows are those aged between this and PII_RETENTION_DAYS. */
export const FLOOR_SELECTS_FROM_DAYS = 20;

export const SERVICE_POOL: AgeWindow = { name: 'service', minDays: 31, maxDays: 88, salt: 1 };
export const FLOOR_POOL: AgeWindow = { name: 'floor', minDays: 21, maxDays: 28, salt: 11 };
