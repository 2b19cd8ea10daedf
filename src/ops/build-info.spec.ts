import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildInfo } from 'src/ops/build-info';

describe('buildInfo (the labels of kyc_build_info)', () => {
  let root: string;
  beforeEach(() => (root = mkdtempSync(join(tmpdir(), 'kyc-build-'))));
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("is package.json's version and the running Node.js release", () => {
    writeFileSync(join(root, 'package.json'), JSON.stringify({ name: 'kyc-delivery', version: '1.4.2' }));
    expect(buildInfo(root, 'v26.12.1')).toEqual({ version: '1.4.2', node_version: 'v26.12.1' });
  });

  it("is this package's own version by default", () => {
    const own = JSON.parse(readFileSync(join(__dirname, '..', '..', 'package.json'), 'utf8')) as { version: string };
    expect(buildInfo()).toEqual({ version: own.version, node_version: process.version });
  });

  it.each([
    ['no package.json', null],
    ['one that is not JSON', '{ nope'],
    ['one without a version', '{}'],
  ])('says unknown with %s', (_what, text) => {
    if (text !== null) writeFileSync(join(root, 'package.json'), text);
    expect(buildInfo(root, 'v24.0.0')).toEqual({ version: 'unknown', node_version: 'v24.0.0' });
  });
});
