#!/usr/bin/env node
// Usage: node scripts/lock-foreign-optionals.js $(npm ci --dry-run 2>&1 | grep Missing | sed "s/.*Missing: \(.*\)@ from lock file/\1/")
// Adds lock entries for platform-specific optional packages whose exact version this registry
// mirror does not serve; npm never fetches them on other platforms, but `npm ci` wants them listed.
const fs = require('fs');
const { execSync } = require('child_process');
const lock = JSON.parse(fs.readFileSync('package-lock.json', 'utf8'));
const missing = process.argv.slice(2);
for (const name of missing) {
  let spec;
  for (const [path, pkg] of Object.entries(lock.packages)) {
    if (pkg.optionalDependencies && pkg.optionalDependencies[name]) { spec = pkg.optionalDependencies[name]; break; }
  }
  const meta = JSON.parse(execSync(`npm view ${name} os cpu libc --json 2>/dev/null`).toString());
  const entry = { version: spec.replace(/^[\^~]/, ''), optional: true };
  if (meta.cpu) entry.cpu = meta.cpu;
  if (meta.os) entry.os = meta.os;
  if (meta.libc) entry.libc = meta.libc;
  lock.packages[`node_modules/${name}`] = entry;
  console.log(name, JSON.stringify(entry));
}
const sorted = {};
for (const key of Object.keys(lock.packages).sort((a, b) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b)))) sorted[key] = lock.packages[key];
lock.packages = sorted;
fs.writeFileSync('package-lock.json', JSON.stringify(lock, null, 2) + '\n');
