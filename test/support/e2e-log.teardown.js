// jest globalTeardown of the e2e project: fails the run if any line any e2e test app logged holds a password or
// token the run's helpers created (test/support/e2e-log.ts). Cheap: tokens (40 hex digits) are looked up in a set
// from the hex runs of the log, the few distinct passwords are searched for in each whole file.
const fs = require('node:fs');
const path = require('node:path');

const HEX_TOKEN = /^[0-9a-f]{40}$/;
/** Shorter secrets (a test's "x") would match by chance; no helper creates one. */
const MIN_SECRET_LENGTH = 8;

function readSecrets(directory) {
  const tokens = new Set();
  const others = new Set();
  for (const file of fs.readdirSync(directory).filter((name) => name.startsWith('secrets-'))) {
    for (const line of fs.readFileSync(path.join(directory, file), 'utf8').split('\n')) {
      if (line === '') continue;
      const secret = JSON.parse(line);
      if (secret.length < MIN_SECRET_LENGTH) continue;
      if (HEX_TOKEN.test(secret)) {
        tokens.add(secret);
      } else {
        others.add(secret);
        others.add(encodeURIComponent(secret));
      }
    }
  }
  return { tokens, others };
}

function lineAt(content, index) {
  return content.slice(0, index).split('\n').length;
}

function scan(directory) {
  const { tokens, others } = readSecrets(directory);
  const leaks = [];
  let lines = 0;
  for (const file of fs.readdirSync(directory).filter((name) => name.startsWith('app-'))) {
    const content = fs.readFileSync(path.join(directory, file), 'utf8');
    lines += content.split('\n').length - 1;
    for (const run of content.matchAll(/[0-9a-f]{40,}/g)) {
      for (let offset = 0; offset + 40 <= run[0].length; offset++) {
        if (tokens.has(run[0].slice(offset, offset + 40))) leaks.push({ file, line: lineAt(content, run.index), kind: 'token' });
      }
    }
    for (const secret of others) {
      const index = content.indexOf(secret);
      if (index >= 0) leaks.push({ file, line: lineAt(content, index), kind: 'password' });
    }
  }
  return { leaks, lines, secrets: tokens.size + others.size };
}

module.exports = async () => {
  const directory = process.env.ANVIL_E2E_LOG_DIR;
  if (!directory || !fs.existsSync(directory)) return;
  const { leaks, lines, secrets } = scan(directory);
  if (leaks.length === 0) {
    console.log(`\nsecrets in logs: ${lines} log lines of the e2e run scanned for ${secrets} secrets, none found`);
    fs.rmSync(directory, { recursive: true, force: true });
    return;
  }
  // The log and the secrets stay for inspection; the message names places, never the secrets themselves.
  const places = leaks.slice(0, 20).map(({ file, line, kind }) => `${kind} in ${path.join(directory, file)}:${line}`);
  throw new Error(`secrets in logs: ${leaks.length} secret(s) found in ${lines} log lines of the e2e run:\n${places.join('\n')}`);
};
