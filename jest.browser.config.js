// `npm run test:browser`: Swagger UI driven by headless Chromium (Debian's `chromium`, or CHROMIUM_PATH) through
// puppeteer-core. Kept out of `npm test` because it needs a browser on the machine; CI runs it (.ci/run).
const transforms = require('./test/support/jest-transform');

module.exports = {
  testTimeout: 120000,
  maxWorkers: 1,
  // One worker runs in jest's own process: a handle a failed test left open (a receiver's socket, a child's pipe)
  // would keep it alive after the last test, until CI's limit, with no log printed. It ends when the tests do.
  forceExit: true,
  projects: [
    {
      displayName: 'browser',
      testEnvironment: 'node',
      rootDir: __dirname,
      testMatch: ['<rootDir>/test/browser/**/*.browser-spec.ts'],
      ...transforms,
    },
  ],
};
