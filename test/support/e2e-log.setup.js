// jest globalSetup of the e2e project: a fresh directory for this run's log and secrets (test/support/e2e-log.ts).
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

module.exports = async () => {
  const directory = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-e2e-log-'));
  fs.chmodSync(directory, 0o700);
  // Set before the workers start, so they inherit it.
  process.env.ANVIL_E2E_LOG_DIR = directory;
};
