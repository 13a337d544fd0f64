// The key worker: OpenPGP parsing and signature verification off the main thread, under the time budget
// OpenPgpAdapter gives each job (a job over budget ends this worker; a fresh one takes its place).
// Protocol (RenderPool's): in { id, text, options }, out { id, html } (the result as JSON) or { id, error };
// an error starting with "PARSE:" is the reason the key was refused.
const fs = require('node:fs');
const path = require('node:path');
const { parentPort } = require('node:worker_threads');

// Built, the inspector is compiled JavaScript beside this file; from the sources (tests, ts-node) it is
// TypeScript, transpiled on load.
const compiled = path.join(__dirname, 'openpgp-inspector.js');
if (!fs.existsSync(compiled)) require('ts-node').register({ transpileOnly: true, project: path.resolve(__dirname, '..', '..', '..', 'tsconfig.json') });
const { OpenPgpInspector, GpgKeyParseError } = require(fs.existsSync(compiled) ? compiled : './openpgp-inspector.ts');

const inspector = new OpenPgpInspector();

async function run(text, options) {
  if (options.op === 'inspect') {
    const ring = await inspector.readKeyRing(text);
    const signer = options.signature ? await inspector.signerOf(ring, options.signature, options.texts, new Date(options.nowMs)) : undefined;
    return { entities: ring.entities, signer };
  }
  if (options.op === 'export')
    return inspector.exportKeys(
      options.entities.map((entity) => ({ armored: entity.armored, subkeyIds: new Set(entity.subkeyIds) })),
      options.comment,
    );
  throw new Error(`unknown operation ${options.op}`);
}

parentPort.on('message', (message) => {
  run(message.text, message.options).then(
    (result) => parentPort.postMessage({ id: message.id, html: JSON.stringify(result) }),
    (error) =>
      parentPort.postMessage({
        id: message.id,
        error: error instanceof GpgKeyParseError ? `PARSE:${error.message}` : String(error && error.message ? error.message : error),
      }),
  );
});
/** This thread's id as /proc knows it, so that the pool budgets jobs in CPU time; undefined off Linux. */
function ownThreadId() {
  try {
    const id = Number(fs.readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
parentPort.postMessage({ ready: true, threadId: ownThreadId() });
