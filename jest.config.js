// Two tiers (CONTRIBUTING.md, "Tests"). The fast tier, project `unit` (`npm test`): the specs beside the code
// (src, *.spec.ts), pure functions and services on SQLite `:memory:` (test/support/service-harness.ts). The
// integration tier, project `e2e` (`npm run test:e2e`, `npm run test:mysql`): test/e2e over HTTP, real database and git.
// Type checking is `npm run typecheck`'s job; the tests only transpile, which keeps them fast.
const transforms = require('./test/support/jest-transform');

module.exports = {
  // A ceiling for a hung test, not a speed requirement: on a busy shared machine the heaviest files take minutes.
  testTimeout: 180000,
  maxWorkers: 2,
  // A worker whose heap has grown past this after a test file is replaced by a fresh one. Each e2e file loads the
  // whole application into its worker again, and a worker kept for the run grew past 1 GiB; every git the
  // application starts is a fork of that worker, whose cost grows with its memory (on a virtual machine about
  // 20 ms of processor time per spawn at 600 MB). Measured on the e2e suite on SQLite, quiet 2-core machine:
  // 704 s of processor time without the limit, 576 s with it (wall 394 s, 323 s).
  workerIdleMemoryLimit: '300MB',
  projects: [
    {
      displayName: 'unit',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/src/**/*.spec.ts'],
      ...transforms,
    },
    {
      displayName: 'e2e',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/e2e/**/*.e2e-spec.ts'],
      // The real Renovate's journey runs on SQLite only: its calls do not depend on the database, the replays and
      // the pulls tests cover those routes on MariaDB, and CI's MariaDB tier is the longer one of its round.
      testPathIgnorePatterns: ['/node_modules/', ...(process.env.TEST_DATABASE === 'mysql' ? ['/test/e2e/clients/renovate-real\\.'] : [])],
      ...transforms,
      // Every test app logs to one directory per run; the teardown fails the run if a created secret is in it.
      globalSetup: '<rootDir>/test/support/e2e-log.setup.js',
      globalTeardown: '<rootDir>/test/support/e2e-log.teardown.js',
      slowTestThreshold: 30,
    },
  ],
};
