import { GENESIS_HASH, auditEntryHash, canonicalJson } from 'src/audit/audit-hash';

const ENTRY = {
  id: '0193a6f2-0000-7000-8000-000000000001',
  object: 'audit_event',
  sequence: 1,
  at: '2026-11-22T01:02:03.456Z',
  actor: { type: 'break_glass', id: null, name: null, via: 'admin_token' },
  action: 'account.created',
  outcome: 'success',
  target: { type: 'account', id: '0193a6f2-0000-7000-8000-000000000002' },
  account_id: '0193a6f2-0000-7000-8000-000000000002',
  changes: ['name', 'webhook_url'],
  request_id: 'req-1',
  source_ip: '203.0.113.7',
  previous_hash: GENESIS_HASH,
};

describe('canonicalJson', () => {
  it('sorts keys at every depth, keeps array order, writes no spaces', () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { z: 1, y: null }], c: 'é"\n' } })).toBe(
      '{"a":{"c":"é\\"\\n","d":[2,{"y":null,"z":1}]},"b":1}',
    );
  });
});

describe('auditEntryHash', () => {
  it('hashes previous_hash, a line feed and the canonical entry without hash (fixed test vector)', () => {
    const canonical =
      '{"account_id":"0193a6f2-0000-7000-8000-000000000002","action":"account.created",' +
      '"actor":{"id":null,"name":null,"type":"break_glass","via":"admin_token"},"at":"2026-11-22T01:02:03.456Z",' +
      '"changes":["name","webhook_url"],"id":"0193a6f2-0000-7000-8000-000000000001","object":"audit_event",' +
      '"outcome":"success","previous_hash":"' +
      GENESIS_HASH +
      '","request_id":"req-1","sequence":1,"source_ip":"203.0.113.7",' +
      '"target":{"id":"0193a6f2-0000-7000-8000-000000000002","type":"account"}}';
    expect(canonicalJson(ENTRY)).toBe(canonical);
    expect(auditEntryHash(ENTRY)).toBe('87f2ee54605c6fea6f48407c822bc697a7bcaf1a6711c718a0c8a1ab0842f96b');
  });

  it('ignores a hash already on the entry and changes with any field', () => {
    const hash = auditEntryHash(ENTRY);
    expect(auditEntryHash({ ...ENTRY, hash })).toBe(hash);
    const other: typeof ENTRY = { ...ENTRY, sequence: 2 };
    expect(auditEntryHash(other)).not.toBe(hash);
    expect(auditEntryHash({ ...ENTRY, previous_hash: 'f'.repeat(64) })).not.toBe(hash);
  });
});
