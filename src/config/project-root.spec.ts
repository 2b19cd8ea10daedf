import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from 'src/config/project-root';

describe('projectRoot (where .local-secrets.json lives)', () => {
  const started = process.cwd();
  afterEach(() => process.chdir(started));

  it('is the folder of package.json, whatever the working directory', () => {
    const root = join(__dirname, '..', '..');
    process.chdir(tmpdir());
    expect(projectRoot()).toBe(root);
  });

  it('is found from a built file deeper down (dist/src/config)', () => {
    const root = mkdtempSync(join(tmpdir(), 'kyc-root-'));
    try {
      writeFileSync(join(root, 'package.json'), '{}');
      const built = join(root, 'dist', 'src', 'config');
      mkdirSync(built, { recursive: true });
      expect(projectRoot(built)).toBe(root);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
