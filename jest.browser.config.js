// `npm run test:browser`: Swagger UI driven by headless Chromium (Debian's `chromium`, or CHROMIUM_PATH) through
// puppeteer-core. Kept out of `npm test` because it needs a browser on the machine; CI runs it (.ci/run).
const transforms = require('./test/support/jest-transform');

module.exports = {
  testTimeout: 120000,
  maxWorkers: 1,
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
