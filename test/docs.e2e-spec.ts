/**
 * The documentation is part of the contract and is checked like code: every relative link resolves
 * (the file, and the heading its #anchor names), no link leaves the repository, every variable the
 * configuration reads is in the operator guide's reference and in .env.example, and every public
 * route of the OpenAPI document the service serves is named in the client guide.
 */
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { TestApp, startApp } from './helpers/test-app';

const ROOT = join(__dirname, '..');

function markdownFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      return statSync(path).isDirectory() ? walk(path) : name.endsWith('.md') ? [path] : [];
    });
  return [
    ...['README.md', 'CONTRIBUTING.md', 'CHANGELOG.md'].map((name) => join(ROOT, name)),
    ...walk(join(ROOT, 'docs')),
  ];
}

/** The text outside fenced code blocks and inline code, where links and headings are markdown. */
function prose(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '').replace(/``[^`\n]+``|`[^`\n]+`/g, '');
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
export function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  const text = markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
  for (const [, heading] of text.matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const slug = heading
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

interface Link {
  file: string;
  target: string;
}

function linksOf(file: string): Link[] {
  const text = prose(readFileSync(file, 'utf8'));
  const targets = [...text.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  return targets.map((target) => ({ file: relative(ROOT, file), target }));
}

/** Why a link does not resolve, or null when it does. */
function brokenLink({ file, target }: Link): string | null {
  if (/^(https?:|mailto:)/.test(target)) return null;
  if (/^[a-z][a-z0-9+.-]*:/i.test(target)) return 'a scheme other than http(s)';
  const [path, anchor] = target.split('#', 2);
  const resolved = path === '' ? join(ROOT, file) : resolve(dirname(join(ROOT, file)), decodeURI(path));
  if (relative(ROOT, resolved).startsWith('..')) return 'points outside the repository';
  if (!existsSync(resolved)) return 'no such file';
  if (anchor === undefined) return null;
  if (!resolved.endsWith('.md')) return 'an anchor into a file that is not markdown';
  return anchorsOf(readFileSync(resolved, 'utf8')).has(anchor) ? null : `no heading #${anchor}`;
}

/** Every variable the service reads, from the code: the configuration loader and any process.env. */
function variablesTheCodeReads(): string[] {
  const names = new Set<string>();
  const sources = (dir: string): string[] =>
    readdirSync(dir).flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return sources(path);
      return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
    });
  for (const path of sources(join(ROOT, 'src'))) {
    const code = readFileSync(path, 'utf8');
    for (const m of code.matchAll(/process\.env(?:\.([A-Z][A-Z0-9_]*)|\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\])/g)) {
      names.add(m[1] ?? m[2]);
    }
    if (!relative(join(ROOT, 'src', 'config'), path).startsWith('..')) {
      // The loader names each variable as a string literal (text(env, 'PORT', …), ConfigError('X', …)).
      for (const m of code.matchAll(/(?<!Symbol\()['"]([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*)['"]/g)) names.add(m[1]);
      for (const m of code.matchAll(/\benv\.([A-Z][A-Z0-9_]*)/g)) names.add(m[1]);
    }
  }
  return [...names].sort();
}

describe('documentation', () => {
  const files = markdownFiles();

  it('finds the documents it checks', () => {
    const names = files.map((file) => relative(ROOT, file));
    expect(names).toEqual(
      expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/client-guide.md', 'docs/operator-guide.md']),
    );
  });

  it('has no relative link that does not resolve, file and #anchor, nor one leaving the repository', () => {
    const links = files.flatMap(linksOf);
    expect(links.length).toBeGreaterThan(50);
    const broken = links.map((link) => ({ ...link, problem: brokenLink(link) })).filter((link) => link.problem);
    expect(broken).toEqual([]);
  });

  it('never points at the steering files outside the repository', () => {
    for (const file of files) {
      expect({ file: relative(ROOT, file), mentions: readFileSync(file, 'utf8').includes('../shared') }).toEqual({
        file: relative(ROOT, file),
        mentions: false,
      });
    }
  });

  it('keeps the README within 200 lines, with the set-up commands CI runs', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    expect(readme.split('\n').length).toBeLessThanOrEqual(200);
    for (const command of ['npm ci', 'npm start', 'npm test'])
      expect(readme).toMatch(new RegExp(`^${command}\\b`, 'm'));
  });

  it('names every variable the code reads in the configuration reference and in .env.example', () => {
    const variables = variablesTheCodeReads();
    expect(variables).toEqual(expect.arrayContaining(['DATABASE_URL', 'PORT', 'HTTP_REQUEST_TIMEOUT_MS']));
    const guide = readFileSync(join(ROOT, 'docs', 'operator-guide.md'), 'utf8');
    const example = readFileSync(join(ROOT, '.env.example'), 'utf8');
    const missing = variables.flatMap((name) => [
      ...(new RegExp(`^\\| \`${name}\` \\|`, 'm').test(guide)
        ? []
        : [`${name}: not in the operator guide's reference`]),
      ...(new RegExp(`^#? ?${name}=`, 'm').test(example) ? [] : [`${name}: not in .env.example`]),
    ]);
    expect(missing).toEqual([]);
  });

  describe('against the served OpenAPI document', () => {
    let t: TestApp;

    beforeAll(async () => {
      t = await startApp({ QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}_docs` });
    });

    afterAll(async () => {
      await t?.close();
    });

    it('names every public route in the client guide', async () => {
      const res = await fetch(`${t.url}/api/docs-json`);
      const document = (await res.json()) as { paths: Record<string, unknown> };
      const publicPaths = Object.keys(document.paths).filter((path) => path.startsWith('/api/v1/public/'));
      expect(publicPaths.length).toBeGreaterThanOrEqual(8);
      const guide = readFileSync(join(ROOT, 'docs', 'client-guide.md'), 'utf8');
      const named = (path: string) =>
        new RegExp(`${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w/-])`).test(guide);
      expect(publicPaths.filter((path) => !named(path))).toEqual([]);
    });
  });
});
