#!/usr/bin/env node
// `npm run dev`: builds if needed, then recompiles on every change (tsc --watch) and restarts the server when its
// compiled code changes (node --watch). Settings come from the environment as for `npm start`.
'use strict';
const path = require('node:path');
const { spawn } = require('node:child_process');
const { build, stale } = require('./build-if-changed');

const root = path.join(__dirname, '..');
if (stale()) build();

const tsc = spawn(process.execPath, [require.resolve('typescript/bin/tsc'), '-p', 'tsconfig.build.json', '--watch', '--preserveWatchOutput'], {
  cwd: root,
  stdio: 'inherit',
});
const server = spawn(process.execPath, ['--watch', path.join('dist', 'src', 'main.js')], { cwd: root, stdio: 'inherit' });

function stop(signal) {
  tsc.kill(signal);
  server.kill(signal);
}
process.on('SIGINT', () => stop('SIGINT'));
process.on('SIGTERM', () => stop('SIGTERM'));
server.on('exit', (code) => {
  tsc.kill('SIGTERM');
  process.exitCode = code ?? 0;
});
