// The pre-receive and post-receive hook program, copied into DATA_DIR/hooks at every start by
// src/git/push-hooks.ts and run by the server's own node: reads git's ref lines, posts them to the push's
// endpoint, and turns a refusal into `Anvil: <message>` on stderr with exit status 1.
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
const chunks = [];
// Where git keeps the pushed objects until pre-receive accepts them: the server reads them from there.
const objects = {};
for (const name of ['GIT_OBJECT_DIRECTORY', 'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_QUARANTINE_PATH']) {
  if (process.env[name]) objects['X-Anvil-' + name.toLowerCase().replace(/_/g, '-')] = encodeURIComponent(process.env[name]);
}
process.stdin.on('data', (chunk) => chunks.push(chunk));
process.stdin.on('end', () => {
  const body = Buffer.concat(chunks);
  const request = http.request(url + hook, {
    method: 'POST',
    headers: { 'Content-Type': 'text/plain', 'Content-Length': body.length, 'X-Anvil-Push': token, ...objects },
  }, (response) => {
    const answer = [];
    response.on('data', (chunk) => answer.push(chunk));
    response.on('end', () => {
      if (response.statusCode === 200) process.exit(0);
      fail(Buffer.concat(answer).toString('utf8').trim() || 'internal error');
    });
  });
  request.on('error', () => fail('internal error: the server did not answer the hook'));
  request.end(body);
});
