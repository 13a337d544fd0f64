// The cluster suite (test/cluster, `npm run test:cluster`): a three-node MariaDB Galera cluster, two Anvil
// instances on one DATA_DIR and nginx in front, all on loopback ports of their own (never the shared MariaDB on
// 3306). Needs root (the Galera nodes run as the mysql user), galera-4, rsync and nginx; CI installs them. The
// tests of one file share the cluster and run in order; one worker.
const transforms = require('./test/support/jest-transform');

module.exports = {
  // A ceiling for a hung step, not a speed requirement.
  testTimeout: 600000,
  maxWorkers: 1,
  // One worker runs in jest's own process: a handle a failed test left open (a receiver's socket, a child's pipe)
  // would keep it alive after the last test, until CI's limit, with no log printed. It ends when the tests do.
  forceExit: true,
  testEnvironment: 'node',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/cluster/**/*.cluster-spec.ts'],
  ...transforms,
  slowTestThreshold: 120,
};
