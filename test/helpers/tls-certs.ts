import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  key: Buffer;
  cert: Buffer;
}

/** A throwaway CA and server certificates for TLS receivers on 127.0.0.1, made with the openssl CLI. */
export interface TestCertificates {
  dir: string;
  /** The CA's certificate, for NODE_EXTRA_CA_CERTS. */
  caPath: string;
  /** Signed by the CA for 127.0.0.1 and localhost. */
  valid: KeyPair;
  /** Signed by the CA for another name only. */
  wrongName: KeyPair;
  /** For 127.0.0.1, signed by itself. */
  selfSigned: KeyPair;
  /** Signed by the CA for 127.0.0.1, valid for one day in 2020. */
  expired: KeyPair;
  remove(): void;
}

function openssl(dir: string, args: string[]): void {
  execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
}

function pair(dir: string, name: string): KeyPair {
  return { key: readFileSync(join(dir, `${name}.key`)), cert: readFileSync(join(dir, `${name}.pem`)) };
}

/** A key and a signing request for `name`, and the extensions file its certificate gets. */
function request(dir: string, name: string, altNames: string): void {
  openssl(
    dir,
    ['req', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${name}.key`, '-out', `${name}.csr`].concat([
      '-subj',
      `/CN=${name}`,
    ]),
  );
  writeFileSync(
    join(dir, `${name}.ext`),
    `subjectAltName=${altNames}\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n`,
  );
}

function signByCa(dir: string, name: string): void {
  openssl(
    dir,
    ['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-CAcreateserial'].concat([
      '-days',
      '2',
      '-extfile',
      `${name}.ext`,
      '-out',
      `${name}.pem`,
    ]),
  );
}

/** `x509 -days` cannot go back in time; `openssl ca` takes explicit dates. */
function signExpiredByCa(dir: string, name: string): void {
  mkdirSync(join(dir, 'ca-db', 'new'), { recursive: true });
  writeFileSync(join(dir, 'ca-db', 'index.txt'), '');
  writeFileSync(join(dir, 'ca-db', 'serial'), '01\n');
  writeFileSync(
    join(dir, 'ca.cnf'),
    [
      '[ca]',
      'default_ca = test_ca',
      '[test_ca]',
      'database = ca-db/index.txt',
      'serial = ca-db/serial',
      'new_certs_dir = ca-db/new',
      'default_md = sha256',
      'policy = any_name',
      '[any_name]',
      'commonName = supplied',
      '',
    ].join('\n'),
  );
  openssl(
    dir,
    ['ca', '-batch', '-config', 'ca.cnf', '-cert', 'ca.pem', '-keyfile', 'ca.key', '-notext'].concat(
      ['-in', `${name}.csr`, '-out', `${name}.pem`, '-extfile', `${name}.ext`],
      ['-startdate', '20200101000000Z', '-enddate', '20200102000000Z'],
    ),
  );
}

export function makeTestCertificates(): TestCertificates {
  const dir = mkdtempSync(join(tmpdir(), 'kyc-tls-'));
  openssl(
    dir,
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem'].concat(
      ['-days', '2', '-subj', '/CN=kyc test CA'],
      ['-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign'],
    ),
  );
  request(dir, 'valid', 'IP:127.0.0.1,DNS:localhost');
  signByCa(dir, 'valid');
  request(dir, 'wrong-name', 'DNS:wrong.example');
  signByCa(dir, 'wrong-name');
  request(dir, 'expired', 'IP:127.0.0.1');
  signExpiredByCa(dir, 'expired');
  openssl(
    dir,
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', 'self-signed.key'].concat([
      '-out',
      'self-signed.pem',
      '-days',
      '2',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
  );
  return {
    dir,
    caPath: join(dir, 'ca.pem'),
    valid: pair(dir, 'valid'),
    wrongName: pair(dir, 'wrong-name'),
    selfSigned: pair(dir, 'self-signed'),
    expired: pair(dir, 'expired'),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}
