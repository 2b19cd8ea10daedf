#!/usr/bin/env node
// Hand-written because madge finds cycles between files only: this groups its import graph by src/'s top-level folders.
const madge = require('madge');

/** `accounts/account.entity.ts` → `accounts`; a file at the root of src/ (main.ts) is its own node. */
const folderOf = (file) => file.split('/')[0];

async function main() {
  const graph = (await madge('src', { fileExtensions: ['ts'], tsConfig: 'tsconfig.json' })).obj();
  const edges = new Map(); // folder → (imported folder → one importing file, for the message)
  for (const [file, imports] of Object.entries(graph)) {
    const from = folderOf(file);
    if (!edges.has(from)) edges.set(from, new Map());
    for (const imported of imports) {
      const to = folderOf(imported);
      if (to !== from && to !== '..' && !edges.get(from).has(to)) edges.get(from).set(to, `${file} → ${imported}`);
    }
  }
  for (const [from, tos] of [...edges].sort())
    if (tos.size > 0) console.log(`${from} → ${[...tos.keys()].sort().join(', ')}`);

  const cycles = [];
  const state = new Map(); // folder → 'open' while on the path, 'done' after
  const visit = (folder, path) => {
    state.set(folder, 'open');
    for (const next of edges.get(folder)?.keys() ?? []) {
      if (state.get(next) === 'open') cycles.push([...path.slice(path.indexOf(next)), next]);
      else if (!state.has(next)) visit(next, [...path, next]);
    }
    state.set(folder, 'done');
  };
  for (const folder of [...edges.keys()].sort()) if (!state.has(folder)) visit(folder, [folder]);

  // Migrations stand still: a migration that imported the service's code would change what it does when that code does.
  const migrations = (await madge('migrations', { fileExtensions: ['ts'], tsConfig: 'tsconfig.json' })).obj();
  const intoSrc = Object.entries(migrations)
    .filter(([file]) => !file.startsWith('..'))
    .flatMap(([file, imports]) =>
      imports.filter((imported) => imported.startsWith('..')).map((imported) => `migrations/${file} → ${imported}`),
    );
  if (intoSrc.length > 0) {
    for (const edge of intoSrc) console.error(`Migration imports code outside migrations/: ${edge}`);
    process.exitCode = 1;
  } else
    console.log(
      `No migration imports code outside migrations/ (${Object.keys(migrations).filter((file) => !file.startsWith('..')).length} files).`,
    );

  checkLayers(graph);
  if (cycles.length === 0) return console.log('No cycle between the top-level folders of src/.');
  for (const cycle of cycles) {
    console.error(`Folder cycle: ${cycle.join(' → ')}`);
    for (let i = 0; i + 1 < cycle.length; i += 1) console.error(`  ${edges.get(cycle[i]).get(cycle[i + 1])}`);
  }
  process.exitCode = 1;
}

/**
 * The delivery pipeline's folders import one way: each may import only the folders listed for it
 * (webhooks.module.ts, at the root of webhooks/, wires them all). Below the line: no folder imports
 * delivery/ or event-log/ but the ones listed, so the worker never loads the API's code and back.
 * A spec may import more (a repository's spec builds its events with the outbox's builder).
 */
const WEBHOOK_LAYERS = {
  tables: [],
  queue: ['tables'],
  outbox: ['tables', 'queue'],
  endpoint: ['tables', 'queue', 'outbox'],
  delivery: ['tables', 'queue', 'outbox', 'endpoint'],
  'event-log': ['tables', 'queue', 'outbox', 'endpoint'],
  dashboard: ['tables', 'queue', 'outbox', 'endpoint', 'event-log'],
};

function checkLayers(graph) {
  const layerOf = (file) => (file.startsWith('webhooks/') && file.split('/').length === 3 ? file.split('/')[1] : null);
  const wrong = [];
  for (const [file, imports] of Object.entries(graph)) {
    const from = layerOf(file);
    if (from === null || file.endsWith('.spec.ts')) continue;
    if (!(from in WEBHOOK_LAYERS)) wrong.push(`webhooks/${from}/ is not a known layer (${file})`);
    for (const imported of imports) {
      const to = layerOf(imported);
      if (to !== null && to !== from && !WEBHOOK_LAYERS[from]?.includes(to)) wrong.push(`${file} → ${imported}`);
    }
  }
  if (wrong.length === 0)
    return console.log(
      'webhooks/ imports one way: tables ← queue ← outbox ← endpoint ← delivery, event-log (event-log ← dashboard).',
    );
  for (const edge of wrong) console.error(`Import against the layers of webhooks/: ${edge}`);
  process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
