import { clusterStateOk, hashTagOf } from 'src/redis/redis-connection';

describe('hashTagOf', () => {
  it.each([
    ['{kyc}', 'kyc'],
    ['{kyc}:delivery:wait', 'kyc'],
    ['app{kyc_1}:x{other}', 'kyc_1'],
    ['{}{kyc}', null],
    ['kyc', null],
    ['kyc{', null],
    ['kyc}x{', null],
  ])('%s → %s', (key, tag) => {
    expect(hashTagOf(key)).toBe(tag);
  });
});

describe('clusterStateOk', () => {
  it('reads cluster_state from CLUSTER INFO', () => {
    expect(clusterStateOk('cluster_enabled:1\r\ncluster_state:ok\r\ncluster_slots_assigned:16384\r\n')).toBe(true);
    expect(clusterStateOk('cluster_state:fail\r\ncluster_slots_ok:10923\r\n')).toBe(false);
    expect(clusterStateOk('')).toBe(false);
  });
});
