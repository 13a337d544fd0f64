// jest globalSetup of the fault suite: builds dist/ when a source is newer than the last build (as `npm start`
// does), so that every server and CLI a test starts runs the code under test without transpiling it again.
const { execFileSync } = require('node:child_process');
const path = require('node:path');

module.exports = async () => {
  execFileSync(process.execPath, [path.join(__dirname, '..', '..', '..', 'scripts', 'build-if-changed.js')], { stdio: 'inherit' });
};
