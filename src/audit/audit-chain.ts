import { GENESIS_HASH, auditEntryHash } from 'src/audit/audit-hash';
import type { AuditEventJson } from 'src/audit/audit-entry';

/** The first break in the chain: a sequence missing, or an entry whose hashes do not match. */
export class ChainBroken extends Error {
  constructor(
    readonly sequence: number,
    readonly problem: string,
  ) {
    super(`audit: sequence ${sequence} ${problem}`);
  }
}

/**
 * Walks the chain from its anchor, a batch at a time: the entries must follow each other from
 * `prunedThrough + 1` with no gap, each `previous_hash` the hash before it (the genesis hash when
 * nothing was pruned; else the oldest kept entry's own anchor) and each `hash` what its fields give.
 * Pure: `audit verify` feeds it the table, a test feeds it an export.
 */
export class ChainWalk {
  private expected: number;
  private previous: string | null;
  private count = 0;

  constructor(private readonly prunedThrough: number) {
    this.expected = prunedThrough + 1;
    this.previous = prunedThrough === 0 ? GENESIS_HASH : null;
  }

  /** Checks the next entries; throws ChainBroken at the first break. */
  add(entries: readonly AuditEventJson[]): void {
    for (const entry of entries) {
      if (entry.sequence !== this.expected) throw new ChainBroken(this.expected, 'is missing');
      if (this.previous !== null && entry.previous_hash !== this.previous)
        throw new ChainBroken(entry.sequence, 'does not follow the entry before it (previous_hash does not match)');
      if (auditEntryHash(entry) !== entry.hash) throw new ChainBroken(entry.sequence, 'has a hash that does not match');
      this.previous = entry.hash;
      this.expected += 1;
      this.count += 1;
    }
  }

  /** After the last entry: the chain must reach the head's last sequence and hash. */
  finish(head: { lastSequence: number; lastHash: string }): string {
    if (this.expected <= head.lastSequence) throw new ChainBroken(this.expected, 'is missing');
    if (this.count > 0 && this.previous !== head.lastHash)
      throw new ChainBroken(this.expected - 1, 'has a hash that does not match the chain head');
    if (this.count === 0) return 'audit: 0 entries, chain intact';
    return `audit: ${this.count} entries, sequences ${this.prunedThrough + 1}–${this.expected - 1}, chain intact`;
  }
}
