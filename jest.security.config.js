// The fuzzing and abuse suite (test/security, `npm run test:security`): over HTTP against the real app on a
// real database, like e2e, but long-running, so it is kept out of `npm test`. Figures go to
// SECURITY_FIGURES (a JSON-lines file) and are printed by test/security/print-figures.js.
const transforms = require('./test/support/jest-transform');

module.exports = {
  testTimeout: 600000,
  maxWorkers: 1,
  // One worker runs in jest's own process: a handle a failed test left open (a receiver's socket, a child's pipe)
  // would keep it alive after the last test, until CI's limit, with no log printed. It ends when the tests do.
  forceExit: true,
  testEnvironment: 'node',
  rootDir: __dirname,
  testMatch: ['<rootDir>/test/security/**/*.security-spec.ts'],
  ...transforms,
};
