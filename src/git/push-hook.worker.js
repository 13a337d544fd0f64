// The pre-receive and post-receive hook program where curl is missing, copied into DATA_DIR/hooks at every start
// by src/git/push-hooks.ts and run by the server's own node: posts what the shell script would (git's quarantine
// variables, each ended by a NUL byte, then git's ref lines) to the push's endpoint, and turns a refusal into
// `Anvil: <message>` on stderr with exit status 1.
'use strict';
// Written by Anvil at start-up; edits are lost. See src/git/push-hooks.ts.
const http = require('node:http');
const hook = process.argv[2];
const url = process.env.ANVIL_HOOK_URL;
const token = process.env.ANVIL_PUSH_TOKEN;
const fail = (message) => {
  process.stderr.write('Anvil: ' + message + '\n');
  process.exit(1);
};
if (!url || !token) fail('this hook runs only for pushes served by Anvil');
// Where git keeps the pushed objects until pre-receive accepts them: the server reads them from there.
const chunks = ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH'].map((name) => Buffer.from((process.env[name] || '') + '\0'));
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const body = Buffer.concat(chunks);
  const request = http.request(
    url + hook,
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/octet-stream', 'Content-Length': body.length, 'X-Anvil-Push': token },
    },
    (response) => {
      const answer = [];
      response.on('data', (chunk) => answer.push(chunk));
      response.on('end', () => {
        if (response.statusCode === 200) process.exit(0);
        fail(Buffer.concat(answer).toString('utf8').trim() || 'internal error');
      });
    },
  );
  request.on('error', () => fail('internal error: the server did not answer the hook'));
  request.end(body);
});
