import { issuedInFuture, operatorFromClaims, rolesFromClaims } from 'src/operators/oidc-claims';

describe('roles from claims', () => {
  it('reads an array, or one space-separated string, ignoring unknown names', () => {
    expect(rolesFromClaims({ roles: ['viewer', 'root', 'auditor'] }, ['roles'])).toEqual(['viewer', 'auditor']);
    expect(rolesFromClaims({ roles: 'operator  admin superuser' }, ['roles'])).toEqual(['operator', 'admin']);
  });

  it('follows a dot path into objects', () => {
    const claims = { realm_access: { roles: ['compliance'] } };
    expect(rolesFromClaims(claims, ['realm_access', 'roles'])).toEqual(['compliance']);
    expect(rolesFromClaims(claims, ['realm_access', 'missing'])).toEqual([]);
    expect(rolesFromClaims({ realm_access: ['x'] }, ['realm_access', 'roles'])).toEqual([]);
  });

  it('gives no role for anything else', () => {
    for (const value of [undefined, null, 3, { admin: true }, [1, 2], 'Admin']) {
      expect(rolesFromClaims({ roles: value }, ['roles'])).toEqual([]);
    }
    expect(rolesFromClaims({}, ['constructor'])).toEqual([]);
  });
});

describe('the operator a token names', () => {
  it('is sub, named by email, else preferred_username, else sub', () => {
    expect(operatorFromClaims({ sub: 's1', email: 'a@x.example', preferred_username: 'al' }, ['roles'])).toEqual({
      type: 'operator',
      id: 's1',
      name: 'a@x.example',
      via: 'oidc',
      roles: [],
    });
    expect(operatorFromClaims({ sub: 's1', preferred_username: 'al' }, ['roles'])?.name).toBe('al');
    expect(operatorFromClaims({ sub: 's1', roles: ['admin'] }, ['roles'])).toMatchObject({
      name: 's1',
      roles: ['admin'],
    });
  });

  it('is no one without a sub', () => {
    expect(operatorFromClaims({ email: 'a@x.example' }, ['roles'])).toBeNull();
    expect(operatorFromClaims({ sub: '' }, ['roles'])).toBeNull();
  });
});

describe('iat', () => {
  it('in the future beyond the leeway is refused', () => {
    expect(issuedInFuture({ iat: 1061 }, 1000, 60)).toBe(true);
    expect(issuedInFuture({ iat: 1060 }, 1000, 60)).toBe(false);
    expect(issuedInFuture({}, 1000, 60)).toBe(false);
  });
});
