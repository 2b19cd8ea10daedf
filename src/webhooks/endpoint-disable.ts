import type { AttemptOutcome } from 'src/webhooks/decide-outcome';
import type { DisableReason } from 'src/webhooks/webhook-endpoint.entity';

export interface DisableInput {
  outcome: AttemptOutcome['kind'];
  /** The endpoint's `failing_since` once this attempt is recorded (null if an attempt succeeded since). */
  failingSince: Date | null;
  now: Date;
  /** WEBHOOK_DISABLE_AFTER in ms; 0 never disables for failing. */
  disableAfterMs: number;
}

/**
 * Whether an attempt disables its endpoint, and why: at once on HTTP 410 (the attempt's outcome is
 * `held`), or when the attempt used up its event's schedule while the endpoint has been failing for
 * longer than WEBHOOK_DISABLE_AFTER (strictly longer: failing exactly that long is not yet too long).
 */
export function endpointDisableReason(input: DisableInput): DisableReason | null {
  if (input.outcome === 'held') return 'gone';
  if (input.outcome !== 'failed' || input.disableAfterMs <= 0 || input.failingSince === null) return null;
  return input.now.getTime() - input.failingSince.getTime() > input.disableAfterMs ? 'failing' : null;
}
