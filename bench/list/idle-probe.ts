/**
 * npm run bench:idle — how each list target answers when load resumes after a pause. For every
 * pause length and target, interleaved and in rotated order: 50 connections for --load s, nothing
 * for the pause, then the same load again; the first response on each connection (the "first
 * wave") and the responses to requests sent in the first --window ms are compared with the steady
 * state of the load phase. See docs/performance.md (Idle and resume).
 *
 * Options: --pauses <s,s,…> (0.5,1,3,6,10), --rounds <n> (2), --load <s> (2), --resume <s> (1),
 * --window <ms> (300), --connections <n> (50), --scenario first|q (q), --reuse (keep the client
 * connections across the pause instead of opening new ones), --targets <list> (service,nest,floor;
 * also service-b), --b-env KEY=VALUE (repeatable) and --b-args "<node flags>" for service-b,
 * --service-args "<node flags>", --logs <dir> (each target's output, with the resume times).
 */
import { appendFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Agent } from 'node:http';
import { Client } from 'pg';
import { FlagError, parseFlags, positiveInteger, readOptions } from '../common/flags';
import { benchDatabaseUrl } from './bench-env';
import { closedLoop, keepAliveAgent } from './idle-load';
import { PauseTally, processCpuMs, tableHeader, tableRow } from './idle-report';
import { FLOOR_MAIN, NEST_FLOOR_MAIN, SERVICE_MAIN, Target, serviceEnv, startTarget } from './targets';
import { Variant, perAccount, qVariants } from './variants';

const TARGETS = ['service', 'service-b', 'nest', 'floor'] as const;
type TargetName = (typeof TARGETS)[number];

interface Options {
  pauses: number[];
  rounds: number;
  load: number;
  resume: number;
  window: number;
  connections: number;
  scenario: 'first' | 'q';
  reuse: boolean;
  targets: TargetName[];
  bEnv: Record<string, string>;
  bArgs: string[];
  serviceArgs: string[];
  logs?: string;
}

function parseOptions(argv: string[]): Options {
  const v = parseFlags(argv, {
    pauses: { type: 'string' },
    rounds: { type: 'string' },
    load: { type: 'string' },
    resume: { type: 'string' },
    window: { type: 'string' },
    connections: { type: 'string' },
    scenario: { type: 'string' },
    reuse: { type: 'boolean' },
    targets: { type: 'string' },
    'b-env': { type: 'string', multiple: true },
    'b-args': { type: 'string' },
    'service-args': { type: 'string' },
    logs: { type: 'string' },
  });
  const pauses = (v.pauses ?? '0.5,1,3,6,10').split(',').map(Number);
  if (pauses.some((p) => !(p >= 0))) throw new FlagError('--pauses needs seconds, comma-separated');
  const targets = (v.targets ?? 'service,nest,floor').split(',') as TargetName[];
  if (targets.some((t) => !TARGETS.includes(t))) throw new FlagError(`--targets: one or more of ${TARGETS.join(',')}`);
  if (v.scenario !== undefined && v.scenario !== 'first' && v.scenario !== 'q')
    throw new FlagError('--scenario is first or q');
  const bEnv = Object.fromEntries((v['b-env'] ?? []).map((pair) => pair.split(/=(.*)/s).slice(0, 2)));
  return {
    pauses,
    rounds: positiveInteger(v, 'rounds', 2),
    load: positiveInteger(v, 'load', 2),
    resume: positiveInteger(v, 'resume', 1),
    window: positiveInteger(v, 'window', 300),
    connections: positiveInteger(v, 'connections', 50),
    scenario: v.scenario ?? 'q',
    reuse: v.reuse === true,
    targets,
    bEnv,
    bArgs: v['b-args']?.split(' ').filter(Boolean) ?? [],
    serviceArgs: v['service-args']?.split(' ').filter(Boolean) ?? [],
    logs: v.logs,
  };
}

function log(line: string): void {
  process.stdout.write(`${line}\n`);
}

interface Running {
  name: TargetName;
  target: Target;
  startedAt: number;
  agent?: Agent;
}

async function start(name: TargetName, options: Options, env: Record<string, string>): Promise<Running> {
  const appEnv = { ...env, PGAPPNAME: `idle-probe:${name}` };
  const startedAt = Date.now();
  const target =
    name === 'floor'
      ? await startTarget(name, FLOOR_MAIN, appEnv, '/')
      : name === 'nest'
        ? await startTarget(name, NEST_FLOOR_MAIN, appEnv, '/')
        : name === 'service'
          ? await startTarget(name, SERVICE_MAIN, appEnv, '/health/live', options.serviceArgs)
          : await startTarget(name, SERVICE_MAIN, { ...appEnv, ...options.bEnv }, '/health/live', options.bArgs);
  return { name, target, startedAt };
}

/** PostgreSQL connections of `name` that started at or after `since` (the server's clock). */
async function newBackends(db: Client, name: TargetName, since: Date): Promise<number> {
  const { rows } = await db.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND backend_start >= $2`,
    [`idle-probe:${name}`, since],
  );
  return rows[0]?.n ?? 0;
}

async function main(): Promise<void> {
  const options = readOptions('bench:idle', parseOptions);
  const databaseUrl = benchDatabaseUrl();
  const variants: Variant[] = options.scenario === 'q' ? qVariants() : perAccount('limit=20');
  const db = new Client({ connectionString: databaseUrl, application_name: 'idle-probe' });
  await db.connect();
  if (options.logs) mkdirSync(options.logs, { recursive: true });
  const running: Running[] = [];
  try {
    for (const name of options.targets) running.push(await start(name, options, serviceEnv(databaseUrl)));
    const tallies = new Map<string, PauseTally>();
    const tally = (pause: number, name: string): PauseTally => {
      const key = `${pause}/${name}`;
      if (!tallies.has(key)) tallies.set(key, new PauseTally());
      return tallies.get(key) as PauseTally;
    };
    for (const r of running) {
      const warmUp = keepAliveAgent(options.connections);
      await closedLoop(r.target.url, variants, warmUp, options.connections, 2);
      warmUp.destroy();
    }
    let turn = 0;
    for (let round = 0; round < options.rounds; round++) {
      for (const pause of options.pauses) {
        const k = turn++ % running.length;
        for (const r of [...running.slice(k), ...running.slice(0, k)]) {
          const t = tally(pause, r.name);
          const agent = (r.agent = options.reuse && r.agent ? r.agent : keepAliveAgent(options.connections));
          const pid = r.target.child.pid;
          const cpuBefore = processCpuMs(pid);
          const loadSamples = await closedLoop(r.target.url, variants, agent, options.connections, options.load);
          t.addLoad(loadSamples);
          t.cpu.load += processCpuMs(pid) - cpuBefore;
          t.cpu.loadResponses += loadSamples.length;
          if (!options.reuse) agent.destroy();
          await sleep(pause * 1000);
          const since = (await db.query<{ now: Date }>('SELECT now()')).rows[0]?.now as Date;
          const resumeAt = Date.now() - r.startedAt;
          const resumeAgent = options.reuse ? agent : keepAliveAgent(options.connections);
          const resumeEpoch = performance.timeOrigin + performance.now();
          const cpuResume = processCpuMs(pid);
          const samples = await closedLoop(r.target.url, variants, resumeAgent, options.connections, options.resume);
          t.cpu.resume += processCpuMs(pid) - cpuResume;
          t.cpu.resumeResponses += samples.length;
          if (!options.reuse) resumeAgent.destroy();
          t.addResume(samples, options.connections, options.window);
          t.newBackends += await newBackends(db, r.name, since);
          if (options.logs) {
            const line = { target: r.name, pause, round, resumeAt, resumeEpoch, loadSamples, samples };
            appendFileSync(join(options.logs, 'samples.jsonl'), `${JSON.stringify(line)}\n`);
          }
        }
      }
      log(`round ${round + 1}/${options.rounds} done`);
    }
    log('');
    log(
      `${options.scenario} scenario, ${options.connections} connections (${options.reuse ? 'kept across the pause' : 'new for each phase'}), ` +
        `${options.load} s load, pause, ${options.resume} s resume; ${options.rounds} rounds, targets interleaved`,
    );
    for (const line of tableHeader(options.window)) log(line);
    for (const pause of options.pauses) for (const r of running) log(tableRow(pause, r.name, tally(pause, r.name)));
  } finally {
    for (const r of running.reverse()) {
      await r.target.stop();
      if (options.logs) writeFileSync(join(options.logs, `${r.name}.log`), r.target.output.join(''));
    }
    await db.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench:idle failed: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
