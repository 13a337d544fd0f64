#!/usr/bin/env node
/*
 * The functions with the most self time in a V8 CPU profile (`node --cpu-prof`, or `BENCH_CPU_PROF=dir npm run
 * bench`), with their share of the sampled time, and the same summed per package (node_modules/<name>, node
 * internals, Anvil's own dist/src, idle/GC): where a hot path spends its time, in one screen.
 *
 *   node bench/profile-summary.js /tmp/prof/CPU.20250101.123456.1234.0.001.cpuprofile [TOP=25]
 */
'use strict';

const fs = require('node:fs');

const [file, topArg] = process.argv.slice(2);
if (!file) {
  console.error('usage: node bench/profile-summary.js FILE.cpuprofile [TOP]');
  process.exit(2);
}
const top = Number(topArg ?? 25);
const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const self = new Map();
// Sample i lasted timeDeltas[i + 1] (the delta before the next sample); the last one's length is unknown.
for (let i = 0; i < profile.samples.length - 1; i++) self.set(profile.samples[i], (self.get(profile.samples[i]) ?? 0) + profile.timeDeltas[i + 1]);
const total = [...self.values()].reduce((a, b) => a + b, 0);

function packageOf(url, name) {
  if (['(idle)', '(garbage collector)', '(program)'].includes(name)) return name;
  if (!url) return '(native)';
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (match) return match[1];
  if (url.startsWith('node:')) return 'node';
  if (url.includes('/dist/src/')) return 'anvil';
  return url;
}

const functions = new Map();
const packages = new Map();
for (const [id, micros] of self) {
  const { callFrame } = byId.get(id);
  const where = callFrame.url ? `${callFrame.url.replace(/^.*node_modules\//, '').replace(/^.*\/dist\/src\//, 'anvil:')}:${callFrame.lineNumber + 1}` : '';
  const key = `${callFrame.functionName || '(anonymous)'} ${where}`.trim();
  functions.set(key, (functions.get(key) ?? 0) + micros);
  const pkg = packageOf(callFrame.url, callFrame.functionName);
  packages.set(pkg, (packages.get(pkg) ?? 0) + micros);
}
const percent = (micros) => `${((100 * micros) / total).toFixed(1).padStart(5)}%`;
console.log(`${(total / 1e6).toFixed(1)} s sampled`);
console.log('\nself time by function:');
for (const [key, micros] of [...functions].sort((a, b) => b[1] - a[1]).slice(0, top)) console.log(`${percent(micros)}  ${key}`);
console.log('\nself time by package:');
for (const [key, micros] of [...packages].sort((a, b) => b[1] - a[1]).slice(0, 15)) console.log(`${percent(micros)}  ${key}`);
