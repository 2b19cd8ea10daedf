// What preflight says about the Node.js it runs on: plain CommonJS, like preflight, so it works before `nest build`.
// The tested releases come from scripts/node-versions (the one place they are pinned); the end-of-life dates are
// Node's published schedule (https://github.com/nodejs/Release), so a line starts being called end of life on its day.
'use strict';
const fs = require('fs');
const path = require('path');

const END_OF_LIFE = { 18: '2025-04-30', 20: '2026-04-30', 22: '2027-04-30', 24: '2028-04-30', 26: '2029-04-30' };
// Nest 12's packages are ESM-only and the compiled service loads them with require(esm): 20.19 is the first with it.
const MINIMUM = [20, 19];

/** The pinned releases of scripts/node-versions, in file order: [{ version, major, role }]. */
function testedReleases(file = path.join(__dirname, 'node-versions')) {
  return fs
    .readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => !/^\s*(#|$)/.test(line))
    .map((line) => {
      const [version, role] = line.trim().split(/\s+/);
      return { version, major: Number(version.split('.')[0]), role };
    });
}

/**
 * One line about this Node.js, or undefined when it is a tested line that is not end of life.
 * version: process.versions.node; today: YYYY-MM-DD; tested: testedReleases().
 * level 'error' stops the start (the service cannot load on it); 'warning' is printed and the start goes on.
 */
function nodeLineNotice(version, today, tested) {
  const [major, minor] = version.split('.').map(Number);
  const image = tested.find((release) => release.role === 'image') || tested[0];
  const lts = tested.filter((release) => release.role === 'lts' && release.major !== image.major);
  const advice =
    `install Node.js ${[image, ...lts].map((release) => release.major).join(' or ')} ` +
    `(LTS; the image runs ${image.version}, CI tests ${tested.map((release) => release.version).join(', ')})`;
  if (major < MINIMUM[0] || (major === MINIMUM[0] && minor < MINIMUM[1])) {
    return {
      level: 'error',
      line: `preflight: Node.js v${version} is too old (the service needs 20.19 or newer); ${advice}.`,
    };
  }
  if (isEndOfLife(major, today)) {
    return {
      level: 'warning',
      line: `preflight: WARNING: Node.js v${version} reached end of life on ${END_OF_LIFE[major]} and gets no security fixes; ${advice}.`,
    };
  }
  if (!tested.some((release) => release.major === major)) {
    return {
      level: 'warning',
      line: `preflight: WARNING: Node.js v${version} is not a line this service is tested on; ${advice}.`,
    };
  }
  return undefined;
}

function isEndOfLife(major, today) {
  return END_OF_LIFE[major] !== undefined && today >= END_OF_LIFE[major];
}

module.exports = { testedReleases, nodeLineNotice };
