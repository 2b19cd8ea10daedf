/**
 * Docker cannot run here, so the deployment files are checked as files: docker-compose.yml against
 * the Compose Specification's JSON schema (vendored, see test/fixtures/README.md) and for what this
 * service needs; the Dockerfile for its key properties (no maintained Dockerfile linter is
 * installable here: hadolint is not in Debian, its npm wrapper downloads a binary).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, posix } from 'node:path';
import Ajv from 'ajv';
import { CORE_SCHEMA, load, loadAll, mergeTag } from 'js-yaml';
import { intersects, minVersion, satisfies } from 'semver';
import { HAPROXY_MISSING, findHaproxy } from './faults/haproxy';
import { inCi } from './helpers/chromium';

const ROOT = join(__dirname, '..');

interface NodeRelease {
  version: string;
  major: number;
  role: string;
}
/** scripts/node-versions as scripts/with-node.sh and preflight read it. */
const TESTED: NodeRelease[] = (
  createRequire(__filename)(join(ROOT, 'scripts', 'node-line.js')) as { testedReleases(): NodeRelease[] }
).testedReleases();
const IMAGE_RELEASE = TESTED.find((release) => release.role === 'image');
const SECRETS = ['ADMIN_TOKEN', 'INTERNAL_API_TOKEN', 'SECRET_ENCRYPTION_KEY', 'POSTGRES_PASSWORD'];
/** `${VAR:?message}`: compose refuses to start when VAR is unset or empty. */
const REQUIRED_VARIABLE = /^\$\{([A-Z0-9_]+):\?[^}]*\}$/;

type Dict = Record<string, unknown>;
interface Service extends Dict {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string>;
  healthcheck?: { test?: unknown; disable?: boolean };
  depends_on?: Record<string, { condition: string }>;
  volumes?: string[];
  profiles?: string[];
  ports?: string[];
}
interface ComposeFile extends Dict {
  services: Record<string, Service>;
  volumes?: Record<string, unknown>;
}

function readCompose(name = 'docker-compose.yml'): { text: string; file: ComposeFile } {
  const text = readFileSync(join(ROOT, name), 'utf8');
  // Compose resolves YAML merge keys (`<<: *app`), so the test does too.
  const file = load(text, { schema: CORE_SCHEMA.withTags(mergeTag) }) as ComposeFile;
  return { text, file };
}

interface Instruction {
  keyword: string;
  args: string;
}

/** The Dockerfile's instructions by stage: comments dropped, continuation lines joined. */
function readDockerfileStages(): Instruction[][] {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const logical = text
    .split('\n')
    .filter((line) => !line.trimStart().startsWith('#'))
    .join('\n')
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean);
  const stages: Instruction[][] = [];
  for (const line of logical) {
    const [, keyword, args] = /^(\S+)\s*(.*)$/.exec(line) ?? [];
    const instruction = { keyword: keyword.toUpperCase(), args };
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

describe('docker-compose.yml', () => {
  const { text, file } = readCompose();
  const { services } = file;

  it('is valid against the Compose Specification schema', () => {
    const schema = JSON.parse(readFileSync(join(__dirname, 'fixtures/compose-spec.json'), 'utf8')) as Dict;
    // The schema names its draft-07 meta-schema by an https URI Ajv does not know; it is draft-07.
    const validate = new Ajv({ allErrors: true, strict: false, validateSchema: false }).compile(schema);
    expect(validate(file) ? [] : validate.errors).toEqual([]);
  });

  it('runs an api and a worker from the same image, each with its role', () => {
    expect(services.api.environment?.APP_ROLE).toBe('api');
    expect(services.worker.environment?.APP_ROLE).toBe('worker');
    expect(services.api.image).toBeDefined();
    expect(services.worker.image).toBe(services.api.image);
    expect(services.worker.build).toEqual(services.api.build);
    expect(services.api.build).toBe('.');
  });

  it('has a healthcheck on postgres, redis, api and worker (the worker serves /health too)', () => {
    for (const name of ['postgres', 'redis', 'api', 'worker']) {
      expect({ name, test: services[name].healthcheck?.test }).toEqual({ name, test: expect.any(Array) });
      expect({ name, disable: services[name].healthcheck?.disable }).toEqual({ name, disable: undefined });
    }
    expect(services.api.healthcheck?.test).toEqual(expect.arrayContaining([expect.stringMatching('/health/')]));
  });

  it('starts the app once PostgreSQL is healthy, migrated, and Redis healthy', () => {
    expect(services.migrate.depends_on).toEqual({ postgres: { condition: 'service_healthy' } });
    for (const name of ['api', 'worker']) {
      expect({ name, depends_on: services[name].depends_on }).toEqual({
        name,
        depends_on: expect.objectContaining({
          migrate: { condition: 'service_completed_successfully' },
          redis: { condition: 'service_healthy' },
        }),
      });
    }
  });

  it('runs Redis with an append-only file and never evicts keys', () => {
    const command = services.redis.command;
    const args = Array.isArray(command) ? command : String(command).split(/\s+/);
    const option = (name: string) => args[args.indexOf(name) + 1];
    expect(args).toContain('--appendonly');
    expect(option('--appendonly')).toBe('yes');
    expect(option('--maxmemory-policy')).toBe('noeviction');
    expect(services.redis.volumes).toEqual(expect.arrayContaining([expect.stringMatching(/^redis-data:\/data$/)]));
  });

  it('keeps PostgreSQL data on a named volume', () => {
    const mount = services.postgres.volumes?.find((v) => v.endsWith(':/var/lib/postgresql/data'));
    const source = mount?.split(':')[0] ?? '';
    expect(source).toMatch(/^[a-z][a-z0-9_-]*$/); // a name, not a host path
    expect(Object.keys(file.volumes ?? {})).toContain(source);
  });

  it('bakes no secret in: each comes from a required ${VAR:?…}, without a default', () => {
    for (const [name, service] of Object.entries(services)) {
      for (const [key, value] of Object.entries(service.environment ?? {})) {
        if (SECRETS.includes(key) || /PASSWORD|TOKEN|SECRET|_KEY$/.test(key)) {
          expect({ name, key, value }).toEqual({ name, key, value: expect.stringMatching(REQUIRED_VARIABLE) });
        }
        // A URL's password, e.g. DATABASE_URL=postgres://user:${POSTGRES_PASSWORD:?…}@host/db.
        const password = /^[a-z]+:\/\/[^:/@]+:(.+)@/.exec(String(value))?.[1];
        if (password !== undefined) {
          expect({ name, key, password }).toEqual({ name, key, password: expect.stringMatching(REQUIRED_VARIABLE) });
        }
      }
    }
    expect(services.api.environment).toEqual(
      expect.objectContaining(Object.fromEntries(SECRETS.slice(0, 3).map((k) => [k, expect.any(String)]))),
    );
    // No default (`${VAR:-…}` or `${VAR-…}`) for any secret anywhere in the file.
    for (const secret of SECRETS) expect(text).not.toMatch(new RegExp(`\\$\\{${secret}:?-`));
  });
});

describe('docker-compose.dev.yml: PostgreSQL and Redis for a newcomer', () => {
  const { file } = readCompose('docker-compose.dev.yml');
  const { services } = file;

  it('is valid against the Compose Specification schema', () => {
    const schema = JSON.parse(readFileSync(join(__dirname, 'fixtures/compose-spec.json'), 'utf8')) as Dict;
    const validate = new Ajv({ allErrors: true, strict: false, validateSchema: false }).compile(schema);
    expect(validate(file) ? [] : validate.errors).toEqual([]);
  });

  it('publishes the default ports on 127.0.0.1 only, as the preflight and the tests expect them', () => {
    expect(Object.keys(services).sort()).toEqual(['postgres', 'redis']);
    expect(services.postgres.ports).toEqual(['127.0.0.1:5432:5432']);
    expect(services.redis.ports).toEqual(['127.0.0.1:6379:6379']);
  });

  it('needs no .env: user postgres without a password, as DATABASE_URL defaults to', () => {
    expect(JSON.stringify(file)).not.toContain('${'); // no variable to set
    expect(services.postgres.environment).toEqual(
      expect.objectContaining({ POSTGRES_USER: 'postgres', POSTGRES_HOST_AUTH_METHOD: 'trust' }),
    );
    const preflight = readFileSync(join(ROOT, 'scripts', 'preflight.js'), 'utf8');
    expect(preflight).toContain('docker compose -f docker-compose.dev.yml up -d postgres');
    expect(preflight).toContain("'postgres://postgres@localhost:5432/kyc'");
  });
});

describe('docker-compose.yml: the monitoring profile', () => {
  const { file } = readCompose();
  const { services } = file;
  const monitoring = ['prometheus', 'grafana'];
  const yaml = <T>(path: string): T => load(readFileSync(join(ROOT, path), 'utf8')) as T;
  /** `./host/path:/container/path[:ro]` bind mounts of a service, as [host, container]. */
  const binds = (name: string): Array<[string, string]> =>
    (services[name].volumes ?? [])
      .filter((volume) => volume.startsWith('./'))
      .map((volume) => volume.split(':').slice(0, 2) as [string, string]);

  it('runs Prometheus and Grafana only with --profile monitoring, reachable on 127.0.0.1 only; the rest always', () => {
    for (const [name, service] of Object.entries(services)) {
      const expected = monitoring.includes(name) ? ['monitoring'] : undefined;
      expect({ name, profiles: service.profiles }).toEqual({ name, profiles: expected });
    }
    for (const name of monitoring) {
      expect({ name, ports: services[name].ports }).toEqual({ name, ports: [expect.stringMatching(/^127\.0\.0\.1:/)] });
      expect({ name, test: services[name].healthcheck?.test }).toEqual({ name, test: expect.any(Array) });
    }
    expect(Object.keys(file.volumes ?? {})).toEqual(expect.arrayContaining(['prometheus-data', 'grafana-data']));
  });

  it('mounts files of the repository, Prometheus its configuration directory (rules beside it)', () => {
    for (const name of monitoring) {
      for (const [host] of binds(name))
        expect({ name, host, exists: existsSync(join(ROOT, host)) }).toMatchObject({ exists: true });
    }
    const command = services.prometheus.command as string[];
    const config = command.find((arg) => arg.startsWith('--config.file='))?.split('=')[1] ?? '';
    expect(binds('prometheus')).toContainEqual(['./deploy/prometheus', posix.dirname(config)]);
    expect(posix.basename(config)).toBe('prometheus.yml');
  });

  it('scrapes the api and the worker on the port they listen on, and loads the shipped alert rules', () => {
    const prometheus = yaml<{
      rule_files: string[];
      scrape_configs: Array<{ job_name: string; metrics_path?: string; static_configs: Array<{ targets: string[] }> }>;
    }>('deploy/prometheus/prometheus.yml');
    const port = services.api.environment?.PORT;
    expect(services.worker.environment?.PORT).toBe(port);
    const targets = prometheus.scrape_configs.flatMap((job) => job.static_configs.flatMap((c) => c.targets));
    expect(targets.sort()).toEqual([`api:${port}`, `worker:${port}`]);
    for (const job of prometheus.scrape_configs) expect(job.metrics_path ?? '/metrics').toBe('/metrics');
    expect(prometheus.rule_files).toEqual(['alerts.yml']);
    expect(existsSync(join(ROOT, 'deploy', 'prometheus', 'alerts.yml'))).toBe(true);
  });

  it('provisions Grafana with the compose Prometheus and the dashboard, where its provider looks', () => {
    const provisioning = binds('grafana').find(([host]) => host === './deploy/grafana/provisioning')?.[1];
    expect(provisioning).toBe('/etc/grafana/provisioning');
    const datasources = yaml<{ datasources: Array<{ type: string; url: string; isDefault?: boolean }> }>(
      'deploy/grafana/provisioning/datasources/prometheus.yml',
    ).datasources;
    const prometheusPort = services.prometheus.ports?.[0].split(':').at(-1);
    expect(datasources).toEqual([
      expect.objectContaining({ type: 'prometheus', url: `http://prometheus:${prometheusPort}`, isDefault: true }),
    ]);
    const providers = yaml<{ providers: Array<{ type: string; options: { path: string } }> }>(
      'deploy/grafana/provisioning/dashboards/kyc.yml',
    ).providers;
    const dashboard = binds('grafana').find(([host]) => host === './deploy/grafana/kyc-delivery.json')?.[1] ?? '';
    expect(providers.map((provider) => provider.options.path)).toEqual([dirname(dashboard)]);
  });
});

interface GrafanaPanel {
  id: number;
  type: string;
  title: string;
  datasource?: { type: string; uid: string };
  gridPos: { x: number; y: number; w: number; h: number };
  targets?: Array<{ refId: string; expr: string; datasource?: { type: string; uid: string } }>;
}

describe('deploy/grafana/kyc-delivery.json', () => {
  const dashboard = JSON.parse(readFileSync(join(ROOT, 'deploy', 'grafana', 'kyc-delivery.json'), 'utf8')) as {
    uid: string;
    title: string;
    schemaVersion: number;
    panels: GrafanaPanel[];
    templating: { list: Array<{ name: string; type: string; query?: unknown }> };
  };
  const panels = dashboard.panels.filter((panel) => panel.type !== 'row');
  const exprs = panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr));

  it('imports anywhere: a stable uid, schema 39, every query on the `datasource` variable (type prometheus)', () => {
    expect(dashboard.uid).toBe('kyc-delivery');
    expect(dashboard.schemaVersion).toBe(39);
    expect(dashboard.templating.list).toContainEqual(
      expect.objectContaining({ name: 'datasource', type: 'datasource', query: 'prometheus' }),
    );
    const prometheus = { type: 'prometheus', uid: '${datasource}' };
    for (const panel of panels) {
      expect({ panel: panel.title, datasource: panel.datasource }).toEqual({
        panel: panel.title,
        datasource: prometheus,
      });
      expect({ panel: panel.title, queries: (panel.targets ?? []).length > 0 }).toEqual({
        panel: panel.title,
        queries: true,
      });
      for (const target of panel.targets ?? []) expect(target.datasource).toEqual(prometheus);
    }
  });

  it('lays its panels out on the 24-column grid without overlap, each with its own id', () => {
    const ids = dashboard.panels.map((panel) => panel.id);
    expect(new Set(ids).size).toBe(ids.length);
    const owner = new Map<string, string>();
    const misplaced: string[] = [];
    for (const { title, gridPos } of dashboard.panels) {
      if (gridPos.x < 0 || gridPos.w <= 0 || gridPos.x + gridPos.w > 24) misplaced.push(`${title}: off the grid`);
      for (let x = gridPos.x; x < gridPos.x + gridPos.w; x += 1) {
        for (let y = gridPos.y; y < gridPos.y + gridPos.h; y += 1) {
          const other = owner.get(`${x},${y}`);
          if (other) misplaced.push(`${title} overlaps ${other} at ${x},${y}`);
          owner.set(`${x},${y}`, title);
        }
      }
    }
    expect(misplaced).toEqual([]);
  });

  it('covers what operators watch, taking the max of the gauges every process exports alike', () => {
    for (const metric of [
      'http_request_duration_seconds_count',
      'http_request_duration_seconds_bucket',
      'webhook_delivery_attempts_total',
      'webhook_delivery_latency_seconds_bucket',
      'webhook_events_failed_total',
      'webhook_queue_jobs',
      'webhook_outbox_backlog',
      'webhook_outbox_waiting',
      'webhook_outbox_oldest_due_seconds',
      'webhook_endpoints_disabled',
      'webhook_endpoint_disables_total',
      'webhook_events_deleted_total',
      'verifications_redacted_total',
      'kyc_dependency_up',
    ]) {
      expect({ metric, used: exprs.some((expr) => expr.includes(`${metric}{`)) }).toEqual({ metric, used: true });
    }
    for (const gauge of [
      'webhook_queue_jobs',
      'webhook_outbox_backlog',
      'webhook_outbox_waiting',
      'webhook_outbox_oldest_due_seconds',
      'webhook_endpoints_disabled',
    ]) {
      for (const expr of exprs.filter((e) => e.includes(`${gauge}{`))) {
        expect(expr).toMatch(new RegExp(`^max(?: by \\([a-z_, ]+\\) )?\\(${gauge}\\{`));
      }
    }
  });
});

describe('Dockerfile', () => {
  const stages = readDockerfileStages();
  const runtime = stages.at(-1) ?? [];
  const args = (keyword: string, stage = runtime) => stage.filter((i) => i.keyword === keyword).map((i) => i.args);

  it('builds every stage on the Node LTS release CI runs the full suite on, pinned by exact version', () => {
    expect(IMAGE_RELEASE).toBeDefined();
    expect(stages.length).toBeGreaterThan(0);
    for (const stage of stages) {
      const [image] = args('FROM', stage)[0].split(/\s+/);
      // node:<version>[-variant][@sha256:…], the version being scripts/node-versions' `image` release.
      const [, version] = /^node:(\d+\.\d+\.\d+)(?:-[a-z0-9-]+)?(?:@sha256:[0-9a-f]{64})?$/.exec(image) ?? [];
      const major = Number(version?.split('.')[0]);
      expect({ image, version, lts: major >= 20 && major % 2 === 0 }).toEqual({
        image,
        version: IMAGE_RELEASE?.version,
        lts: true,
      });
    }
  });

  it('installs production dependencies only, from the lockfile, in the runtime stage', () => {
    expect(args('RUN')).toEqual(expect.arrayContaining([expect.stringMatching(/\bnpm ci\b.*--omit=dev\b/)]));
    expect(args('COPY')).toEqual(expect.arrayContaining([expect.stringMatching(/\bpackage-lock\.json\b/)]));
  });

  it('runs as a non-root user', () => {
    const users = args('USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
  });

  it('declares a HEALTHCHECK that probes /health', () => {
    expect(args('HEALTHCHECK')).toEqual([expect.stringMatching(/\/health\//)]);
  });

  it('runs the service with the young generation the benchmarks measured, as npm start does', () => {
    // With V8's default (16 MB a semi-space on Node 20, 32 on Node 26 with a 4 GB heap), a worker
    // draining a backlog slowed other clients' reads on a two-core host (docs/performance.md).
    const flag = '--max-semi-space-size=64';
    const [cmd] = args('CMD');
    expect(JSON.parse(cmd ?? '[]')).toEqual(['node', flag, 'dist/src/main.js']);
    const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    };
    expect(scripts['start:prod']).toBe(`node ${flag} dist/src/main.js`);
    expect(scripts.start).toMatch(new RegExp(`&& node ${flag} dist/src/main\\.js$`));
  });

  it('bakes no secret into ENV or ARG', () => {
    const declared = stages.flat().filter((i) => i.keyword === 'ENV' || i.keyword === 'ARG');
    for (const { args: declaration } of declared) {
      expect(declaration).not.toMatch(/PASSWORD|TOKEN|SECRET|_KEY\b/);
    }
  });
});

describe('Node.js lines: what engines admits is what CI tests', () => {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    engines: { node: string };
    devDependencies: Record<string, string>;
  };
  const engines = pkg.engines.node;

  it('admits every pinned release and no line that has none', () => {
    expect(TESTED.length).toBeGreaterThanOrEqual(3);
    for (const { version } of TESTED)
      expect({ version, admitted: satisfies(version, engines) }).toEqual({ version, admitted: true });
    for (const range of engines.split('||').map((part) => part.trim())) {
      expect({ range, tested: TESTED.some(({ version }) => satisfies(version, range)) }).toEqual({
        range,
        tested: true,
      });
    }
    // Open-ended ranges (">=20.19") admit lines nobody ran: every major engines admits must be a tested one.
    const admitted = Array.from({ length: 60 }, (_, major) => major).filter((major) =>
      intersects(engines, `>=${major}.0.0 <${major + 1}.0.0`),
    );
    expect(admitted).toEqual(TESTED.map(({ major }) => major).sort((a, b) => a - b));
    const oldest = Math.min(...TESTED.map(({ major }) => major));
    expect(minVersion(engines)?.major).toBe(oldest);
  });

  it('pins each line once, with one image release', () => {
    expect(new Set(TESTED.map(({ major }) => major)).size).toBe(TESTED.length);
    expect(TESTED.filter(({ role }) => role === 'image')).toHaveLength(1);
  });

  it('types the code against the image line (@types/node of the same major)', () => {
    const installed = JSON.parse(
      readFileSync(join(ROOT, 'node_modules', '@types', 'node', 'package.json'), 'utf8'),
    ) as {
      version: string;
    };
    expect(minVersion(pkg.devDependencies['@types/node'])?.major).toBe(IMAGE_RELEASE?.major);
    expect(Number(installed.version.split('.')[0])).toBe(IMAGE_RELEASE?.major);
  });

  it('runs this suite on a Node.js that engines admits', () => {
    expect({ node: process.versions.node, admitted: satisfies(process.versions.node, engines) }).toEqual({
      node: process.versions.node,
      admitted: true,
    });
  });
});

interface Container {
  name: string;
  image: string;
  env?: Array<{ name: string; value?: string }>;
  lifecycle?: { preStop?: { exec?: { command?: string[] } } };
  readinessProbe?: { httpGet?: { path?: string } };
  livenessProbe?: { httpGet?: { path?: string } };
}
interface Manifest {
  kind: string;
  metadata: { name: string };
  spec: { template?: { spec: { terminationGracePeriodSeconds?: number; containers: Container[] } } };
}

describe('deploy/kubernetes/kyc.yaml', () => {
  const manifests = loadAll(readFileSync(join(ROOT, 'deploy', 'kubernetes', 'kyc.yaml'), 'utf8')) as Manifest[];
  const deployments = manifests.filter((manifest) => manifest.kind === 'Deployment');
  const container = (name: string): { grace: number; container: Container } => {
    const pod = deployments.find((d) => d.metadata.name === name)?.spec.template?.spec;
    if (!pod || pod.containers.length !== 1) throw new Error(`${name}: expected one Deployment with one container`);
    return { grace: pod.terminationGracePeriodSeconds ?? 30, container: pod.containers[0] };
  };
  const env = (c: Container, name: string): string | undefined => c.env?.find((entry) => entry.name === name)?.value;
  /** The drain budget the contract gives a process after SIGTERM, in seconds. */
  const drainBudget = (c: Container): number => Number(env(c, 'WEBHOOK_TIMEOUT_MS') ?? 10_000) / 1000 + 5;

  it('runs an api and a worker Deployment, each with its role, on the release the package says', () => {
    const version = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
    for (const [name, role] of [
      ['kyc-api', 'api'],
      ['kyc-worker', 'worker'],
    ]) {
      const { container: c } = container(name);
      expect({ name, role: env(c, 'APP_ROLE'), image: c.image }).toEqual({
        name,
        role,
        image: `kyc-delivery:${version}`,
      });
      expect(c.readinessProbe?.httpGet?.path).toBe('/health/ready');
      expect(c.livenessProbe?.httpGet?.path).toBe('/health/live');
    }
  });

  it('gives the api time to leave the endpoints (preStop) and then its whole drain budget', () => {
    const { grace, container: api } = container('kyc-api');
    const [command, seconds] = api.lifecycle?.preStop?.exec?.command ?? [];
    expect(command).toBe('sleep');
    expect(Number(seconds)).toBeGreaterThanOrEqual(5);
    expect(grace).toBeGreaterThan(Number(seconds) + drainBudget(api));
  });

  it('gives the worker its drain budget', () => {
    const { grace, container: worker } = container('kyc-worker');
    expect(grace).toBeGreaterThan(drainBudget(worker));
  });
});

describe('deploy/haproxy/haproxy.cfg', () => {
  const path = join(ROOT, 'deploy', 'haproxy', 'haproxy.cfg');
  const lines = readFileSync(path, 'utf8')
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter(Boolean);
  const setting = (prefix: string): string | undefined => lines.find((line) => line.startsWith(`${prefix} `));

  it('checks readiness, and retries only requests the service cannot have processed', () => {
    expect(setting('option httpchk')).toBe('option httpchk GET /health/ready');
    expect(setting('http-check expect')).toBe('http-check expect status 200');
    expect(setting('retry-on')?.split(/\s+/).slice(1).sort()).toEqual(['conn-failure', 'empty-response']);
    expect(setting('option redispatch')).toBeDefined();
  });

  it('purges its idle server connections long before the service closes them (65 s keep-alive)', () => {
    // pool-purge-delay (default 5 s) decides it; unset here, or any value under 65 s.
    const purge = setting('pool-purge-delay');
    expect(purge === undefined || Number(/^pool-purge-delay (\d+)s$/.exec(purge)?.[1]) < 65).toBe(true);
  });

  const haproxy = findHaproxy();
  (haproxy || inCi() ? it : it.skip)('is accepted by haproxy -c', () => {
    if (!haproxy) throw new Error(HAPROXY_MISSING);
    const result = spawnSync(haproxy, ['-c', '-f', path], { encoding: 'utf8' });
    expect({ status: result.status, output: result.stdout + result.stderr }).toMatchObject({ status: 0 });
  });
});
