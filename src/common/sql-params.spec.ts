import { SqlParams } from 'src/common/sql-params';

describe('SqlParams', () => {
  it('numbers placeholders from $1 in the order values are added', () => {
    const params = new SqlParams();
    expect([params.add('a'), params.add(['b', 'c']), params.add(3)]).toEqual(['$1', '$2', '$3']);
    expect(params.values).toEqual(['a', ['b', 'c'], 3]);
  });
});
