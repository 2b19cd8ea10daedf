import { ChainBroken, ChainWalk } from 'src/audit/audit-chain';
import type { AuditEventJson } from 'src/audit/audit-entry';
import { GENESIS_HASH, auditEntryHash } from 'src/audit/audit-hash';

function chain(n: number): AuditEventJson[] {
  const entries: AuditEventJson[] = [];
  let previous = GENESIS_HASH;
  for (let sequence = 1; sequence <= n; sequence += 1) {
    const entry: AuditEventJson = {
      id: `0193a6f2-0000-7000-8000-${String(sequence).padStart(12, '0')}`,
      object: 'audit_event',
      sequence,
      at: '2026-11-22T01:02:03.456Z',
      actor: { type: 'system', id: null, name: null, via: 'service' },
      action: 'verification.redacted',
      outcome: 'success',
      target: null,
      account_id: null,
      changes: [],
      request_id: null,
      source_ip: null,
      previous_hash: previous,
      hash: '',
    };
    entry.hash = auditEntryHash(entry);
    previous = entry.hash;
    entries.push(entry);
  }
  return entries;
}

const headOf = (entries: AuditEventJson[]) => ({
  lastSequence: entries[entries.length - 1].sequence,
  lastHash: entries[entries.length - 1].hash,
});

function brokenAt(walk: () => void): number | undefined {
  try {
    walk();
  } catch (error) {
    if (error instanceof ChainBroken) return error.sequence;
    throw error;
  }
  return undefined;
}

describe('ChainWalk', () => {
  it('accepts an intact chain, in batches, and says so in one line', () => {
    const entries = chain(5);
    const walk = new ChainWalk(0);
    walk.add(entries.slice(0, 2));
    walk.add(entries.slice(2));
    expect(walk.finish(headOf(entries))).toBe('audit: 5 entries, sequences 1–5, chain intact');
  });

  it('starts at the anchor after retention pruned the oldest entries', () => {
    const entries = chain(5);
    const walk = new ChainWalk(2);
    walk.add(entries.slice(2));
    expect(walk.finish(headOf(entries))).toBe('audit: 3 entries, sequences 3–5, chain intact');
  });

  it('names the first entry whose hash does not match', () => {
    const entries = chain(5);
    entries[2] = { ...entries[2], changes: ['name'] };
    expect(brokenAt(() => new ChainWalk(0).add(entries))).toBe(3);
  });

  it('names the first missing sequence, in the middle, at the start and at the end', () => {
    const entries = chain(5);
    expect(brokenAt(() => new ChainWalk(0).add([...entries.slice(0, 2), ...entries.slice(3)]))).toBe(3);
    expect(brokenAt(() => new ChainWalk(0).add(entries.slice(1)))).toBe(1);
    const walk = new ChainWalk(0);
    walk.add(entries.slice(0, 4));
    expect(brokenAt(() => walk.finish(headOf(entries)))).toBe(5);
  });

  it('refuses an entry whose previous_hash is not the hash before it, even when its own hash matches', () => {
    const entries = chain(3);
    const forged = { ...entries[1], previous_hash: 'f'.repeat(64) };
    forged.hash = auditEntryHash(forged);
    expect(brokenAt(() => new ChainWalk(0).add([entries[0], forged, entries[2]]))).toBe(2);
  });
});
