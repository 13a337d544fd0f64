import { execFile } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { budgetedGit, useCgroups } from './git-budget';
import { cgroup2Mount, detectCgroup, realCgroupSources, unifiedPath } from './git-cgroups';
import { spawnGit } from './spawn-git';

/**
 * The cgroup v2 plumbing against a fake cgroupfs: a plain directory with the files the kernel would show. What
 * the kernel itself does (enforcing memory.max, moving a pid) cannot be exercised on a host without a delegated
 * cgroup v2 hierarchy; what Anvil writes, and where, can.
 */
describe('cgroup v2 budgets for git', () => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-cgroupfs-'));
  const mountinfo = [
    '25 30 0:22 / /proc rw,nosuid,nodev,noexec,relatime shared:13 - proc proc rw',
    `31 23 0:28 / ${root} rw,nosuid,nodev,noexec,relatime shared:9 - cgroup2 cgroup2 rw,nsdelegate`,
  ].join('\n');
  const service = path.join(root, 'system.slice', 'anvil.service');

  function fakeCgroup(dir: string, files: Record<string, string>): void {
    fs.mkdirSync(dir, { recursive: true });
    for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  }

  afterAll(() => {
    useCgroups({ parent: null, reason: 'test over' });
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('finds the cgroup2 mount and the unified path, and none under cgroup v1 alone', () => {
    expect(cgroup2Mount(mountinfo)).toBe(root);
    expect(unifiedPath('0::/system.slice/anvil.service\n')).toBe('/system.slice/anvil.service');
    const v1 = '32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory';
    expect(cgroup2Mount(v1)).toBeNull();
    expect(unifiedPath('4:memory:/x\n1:cpu:/\n')).toBeNull();
  });

  it('falls back to rlimits on this host, saying why (it has no writable cgroup v2 hierarchy)', () => {
    const detection = detectCgroup('auto', realCgroupSources());
    // Where a delegated hierarchy exists this test says nothing; here (cgroup v1) it is the fallback.
    if (cgroup2Mount(realCgroupSources().mountinfo) === null) {
      expect(detection).toEqual({ parent: null, reason: 'no cgroup v2 filesystem is mounted' });
    }
    expect(detectCgroup('off', realCgroupSources())).toEqual({ parent: null, reason: 'GIT_CGROUP is off' });
  });

  it('moves the server into a leaf of its delegated cgroup and enables memory and cpu for the children', () => {
    fakeCgroup(service, { 'cgroup.controllers': 'cpuset cpu io memory pids\n', 'cgroup.subtree_control': '', 'cgroup.procs': '4242\n' });
    const detection = detectCgroup('auto', { mountinfo, selfCgroup: '0::/system.slice/anvil.service\n', pid: 4242 });
    expect(detection).toEqual({ parent: service, cpu: true });
    expect(fs.readFileSync(path.join(service, 'anvil-server', 'cgroup.procs'), 'utf8')).toBe('4242\n');
    expect(fs.readFileSync(path.join(service, 'cgroup.subtree_control'), 'utf8')).toBe('+memory +cpu');
  });

  it('refuses a hierarchy without the memory controller, or a path that is no cgroup', () => {
    const other = path.join(root, 'no-memory');
    fakeCgroup(other, { 'cgroup.controllers': 'cpu pids\n', 'cgroup.subtree_control': '' });
    expect(detectCgroup(other, { mountinfo, selfCgroup: '', pid: 1 })).toEqual({ parent: null, reason: `the memory controller is not delegated to ${other}` });
    expect(detectCgroup(root, { mountinfo, selfCgroup: '', pid: 1 }).parent).toBeNull();
  });

  it('starts each git in a child cgroup with memory.max and cpu.max, its CPU time still an rlimit, and removes it after', async () => {
    const parent = path.join(root, 'delegated');
    fakeCgroup(parent, { 'cgroup.controllers': 'cpu memory\n', 'cgroup.subtree_control': 'cpu memory\n', 'cgroup.procs': '' });
    expect(useCgroups(detectCgroup(parent, { mountinfo, selfCgroup: '', pid: 1 }))).toMatch(/^cgroup v2 under .*delegated \(memory\.max, cpu\.max\)/);

    const command = budgetedGit(['--version'], { memoryBytes: 256 * 1024 ** 2, cpuSeconds: 5 });
    expect(command.file).toBe('/bin/sh');
    expect(command.args.join(' ')).not.toMatch(/--as=/);
    expect(command.args.join(' ')).toMatch(/--cpu=5:unlimited|ulimit -S -t 5/);
    const dir = path.dirname(command.cgroup!.procs);
    expect(path.dirname(dir)).toBe(parent);
    expect(fs.readFileSync(path.join(dir, 'memory.max'), 'utf8')).toBe(`${256 * 1024 ** 2}\n`);
    expect(fs.readFileSync(path.join(dir, 'cpu.max'), 'utf8')).toBe('100000 100000\n');
    const outcome = await new Promise<{ pid: number | undefined; stdout: string }>((resolve) => {
      const child = execFile(command.file, command.args, (_error, stdout) => resolve({ pid: child.pid, stdout }));
    });
    expect(outcome.stdout).toMatch(/^git version/);
    // The shell wrote its own pid, which exec made git's.
    expect(fs.readFileSync(command.cgroup!.procs, 'utf8').trim()).toBe(String(outcome.pid));
    // What the kernel writes when memory.max stopped the process.
    fs.writeFileSync(path.join(dir, 'memory.events'), 'low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n');
    expect(command.cgroup!.release()).toEqual({ oomKilled: true });
    expect(fs.existsSync(dir)).toBe(false);

    // Through spawnGit the cgroup goes when git exits.
    const child = spawnGit(['--version'], { env: { PATH: process.env.PATH ?? '/usr/bin:/bin' } }, { memoryBytes: 128 * 1024 ** 2 });
    child.stdout.resume();
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(fs.readdirSync(parent).filter((name) => name.startsWith('git-'))).toEqual([]);

    expect(useCgroups({ parent: null, reason: 'none here' })).toMatch(/RLIMIT_AS, RLIMIT_CPU\): none here$/);
    expect(budgetedGit(['--version'], { memoryBytes: 256 * 1024 ** 2 }).cgroup).toBeUndefined();
  });
});
