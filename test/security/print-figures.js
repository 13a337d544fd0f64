// Prints the security suite's figures (see figures.ts) as one summary, then removes the file.
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');

const file = process.env.SECURITY_FIGURES || path.join(os.tmpdir(), 'anvil-security-figures.jsonl');
if (!fs.existsSync(file)) {
  console.log('security figures: none recorded');
  process.exit(0);
}
const rows = fs
  .readFileSync(file, 'utf8')
  .split('\n')
  .filter(Boolean)
  .map((line) => JSON.parse(line));
fs.rmSync(file, { force: true });
let requests = 0;
let errors = 0;
let worstDelay = 0;
let worstStall = 0;
console.log('== security figures');
for (const row of rows) {
  const { suite, ...figures } = row;
  console.log(
    `  ${suite}: ${Object.entries(figures)
      .map(([key, value]) => `${key}=${value}`)
      .join(', ')}`,
  );
  requests += figures.requests || 0;
  errors += figures.status5xx || 0;
  worstDelay = Math.max(worstDelay, figures.worstEventLoopDelayMs || 0);
  worstStall = Math.max(worstStall, figures.worstBusyStallMs || 0);
}
console.log(
  `security: ${requests} requests generated, ${errors} answers of 5xx, worst event-loop delay ${worstDelay.toFixed(1)} ms` +
    ` (worst while the loop was busy: ${worstStall.toFixed(1)} ms)`,
);
