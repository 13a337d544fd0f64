import { spawn } from 'node:child_process';
import { heldByDeadProcessHere, processToken, startTicks } from './process-identity';

describe('process tokens', () => {
  const own = processToken();
  /** The token a process `pid` started at `start` would have on this machine. */
  const tokenOf = (pid: number, start: string) => own.replace(/^([0-9a-f]{12})-\d+-\d+-/, `$1-${pid}-${start}-`);

  it('name this machine, this process and its start, and differ each time', () => {
    expect(own).toMatch(new RegExp(`^[0-9a-f]{12}-${process.pid}-${startTicks(process.pid)}-[0-9a-f]{16}$`));
    expect(processToken()).not.toBe(own);
    expect(own.length).toBeLessThanOrEqual(64);
  });

  it('tell a running process from one that ended', async () => {
    const child = spawn('sleep', ['60'], { stdio: 'ignore' });
    await new Promise((resolve) => child.once('spawn', resolve));
    const token = tokenOf(child.pid as number, startTicks(child.pid as number));
    expect(heldByDeadProcessHere(token)).toBe(false);
    expect(heldByDeadProcessHere(own)).toBe(false);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(heldByDeadProcessHere(token)).toBe(true);
  });

  it('take a pid used again by another process (another start) for the old one dead', () => {
    expect(heldByDeadProcessHere(tokenOf(process.pid, `${Number(startTicks(process.pid)) - 1}`))).toBe(true);
  });

  it('never judge a holder of another machine, or an unreadable token, dead', () => {
    const elsewhere = own.replace(/^[0-9a-f]{12}/, (machine) => (machine === '000000000000' ? '111111111111' : '000000000000'));
    expect(heldByDeadProcessHere(elsewhere.replace(/-\d+-\d+-/, '-999999999-1-'))).toBe(false);
    for (const token of ['', 'x-0123456789abcdef', '0123456789abcdef0123456789abcdef', `${own}x`]) expect(heldByDeadProcessHere(token)).toBe(false);
    // pid 0 would be this process's group to `kill`: never a holder.
    expect(heldByDeadProcessHere(tokenOf(0, '1'))).toBe(false);
  });
});
