import { ChainWalk } from 'src/audit/audit-chain';
import type { AuditEventRepository } from 'src/audit/audit-event.repository';

const VERIFY_BATCH = 5_000;

/**
 * `audit verify`: the whole trail from its anchor, a batch at a time. Returns the one line to print;
 * throws ChainBroken naming the first sequence that is missing or does not match.
 */
export async function verifyAuditChain(entries: AuditEventRepository): Promise<string> {
  const head = await entries.head();
  const walk = new ChainWalk(head.prunedThrough);
  for (let after = head.prunedThrough; ;) {
    const batch = await entries.batch(after, VERIFY_BATCH);
    walk.add(batch);
    if (batch.length < VERIFY_BATCH) break;
    after = batch[batch.length - 1].sequence;
  }
  return `${walk.finish(head)}\n`;
}
