import { ChildProcessWithoutNullStreams, spawn, SpawnOptionsWithStdioTuple, StdioPipe } from 'node:child_process';
import { budgetedGit, ProcessBudget } from './git-budget';

/**
 * `spawn('git', …)` with its pipes. When the process has no descriptors left (EMFILE, ENFILE) Node starts nothing,
 * gives the child no pipes and reports the error only on the next tick: code that touched `child.stdout` threw,
 * and the error event then found no listener and ended the whole server. Here that case is an error thrown at
 * once, with the code the error answers (503) are chosen by; other failures to start (EAGAIN, ENOMEM, ENOENT) still
 * arrive as the child's `error` event, which every caller listens to.
 */
export function spawnGit(
  args: string[],
  options: Omit<SpawnOptionsWithStdioTuple<StdioPipe, StdioPipe, StdioPipe>, 'stdio'>,
  budget: ProcessBudget = {},
): ChildProcessWithoutNullStreams {
  // Under its memory and CPU budget (git-budget.ts): started through prlimit, which then becomes git.
  const command = budgetedGit(args, budget);
  const child = spawn(command.file, command.args, { ...options, stdio: ['pipe', 'pipe', 'pipe'] });
  if (child.stdin === null || child.stdout === null || child.stderr === null) {
    child.on('error', () => undefined);
    throw Object.assign(new Error('git could not be started: too many open files'), { code: 'EMFILE' });
  }
  return child;
}

/** Resolves once git runs; rejects with the reason it could not start (EAGAIN, ENOMEM, ENOENT). */
export function gitStarted(child: ChildProcessWithoutNullStreams): Promise<void> {
  if (child.pid !== undefined) return Promise.resolve();
  return new Promise((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', reject);
  });
}
