import { execFile } from 'node:child_process';
import { budgetedGit, exhaustedBudget } from './git-budget';

function run(file: string, args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(file, args, (error, stdout, stderr) => resolve({ code: error ? ((error as { code?: number }).code ?? null) : 0, stdout, stderr }));
  });
}

describe('budgetedGit', () => {
  it('is plain git without a budget', () => {
    expect(budgetedGit(['--version'])).toEqual({ file: 'git', args: ['--version'] });
  });

  it('starts git under soft address-space and CPU limits, with pack windows that fit them', async () => {
    const command = budgetedGit(['config', '--get', 'core.packedGitLimit'], { memoryBytes: 512 * 1024 ** 2, cpuSeconds: 7 });
    expect(command.args).toContain('git');
    const outcome = await run(command.file, command.args);
    expect(outcome.code).toBe(0);
    expect(Number(outcome.stdout.trim())).toBe(128 * 1024 ** 2);
  });

  it('makes a git that needs more memory than its budget fail, and says so', async () => {
    // Reading a 64 MiB object into memory needs more than a 32 MiB address space (git itself takes some).
    const command = budgetedGit(['hash-object', '--stdin', '--literally'], { memoryBytes: 32 * 1024 ** 2 });
    const child = execFile(command.file, command.args, () => undefined);
    const stderr: string[] = [];
    child.stderr!.on('data', (chunk: string) => stderr.push(chunk));
    child.stdin!.on('error', () => undefined);
    child.stdin!.end(Buffer.alloc(64 * 1024 ** 2, 1));
    const code = await new Promise<number | null>((resolve) => child.on('close', (exit) => resolve(exit)));
    expect(code).not.toBe(0);
    expect(exhaustedBudget(stderr.join(''), null)).toBe(true);
  });
});
