import * as fs from 'node:fs';
import * as path from 'node:path';

/**
 * The e2e run's log, so that a test can scan every line of it for every token and password the run created: test/support/e2e-log.setup.js makes a directory for the run and names it in this variable; every
 * test app of every worker appends its log there (test-app.ts), the factories record every password and token they
 * create, and test/support/e2e-log.teardown.js fails the run if any log line holds one of them.
 */
export const E2E_LOG_DIR = 'ANVIL_E2E_LOG_DIR';

function runDirectory(): string | undefined {
  const directory = process.env[E2E_LOG_DIR];
  return directory && fs.existsSync(directory) ? directory : undefined;
}

/** Where this worker's test apps append their log, when the run collects logs. */
export function e2eLogFile(): string | undefined {
  const directory = runDirectory();
  return directory ? path.join(directory, `app-${process.pid}.log`) : undefined;
}

/** Records secrets a helper created, for the end-of-run scan. */
export function recordSecrets(...secrets: string[]): void {
  const directory = runDirectory();
  if (!directory) return;
  const lines = secrets.filter((secret) => secret !== '').map((secret) => `${JSON.stringify(secret)}\n`);
  fs.appendFileSync(path.join(directory, `secrets-${process.pid}.jsonl`), lines.join(''), { mode: 0o600 });
}
