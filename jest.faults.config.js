// The fault suite (test/faults, `npm run test:faults`): the real server and a real database under the faults an
// operator meets on a bad day (a full disk, a hung or stopped database, few file descriptors, kill -9). Some tests
// need root (a small tmpfs for DATA_DIR); CI runs as root. Kept out of `npm test` because they are slow and start
// private servers; one worker, so the faults of one file never disturb another.
const transforms = require('./test/support/jest-transform');

module.exports = {
  // A ceiling for a hung test, not a speed requirement.
  testTimeout: 600000,
  maxWorkers: 1,
  // One worker runs in jest's own process: a handle a failed test left open (a receiver's socket, a child's pipe)
  // would keep it alive after the last test, until CI's limit, with no log printed. It ends when the tests do.
  forceExit: true,
  testEnvironment: 'node',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/faults/**/*.fault-spec.ts'],
  ...transforms,
  slowTestThreshold: 60,
  // The servers and CLIs the tests start run from dist/, as `npm start` does: built here when a source changed.
  globalSetup: '<rootDir>/test/faults/support/build.setup.js',
};
