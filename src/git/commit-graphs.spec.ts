import { Logger } from '@nestjs/common';
import { CommitGraphs } from './commit-graphs';
import { inBackground } from './git-client';
import type { GitRepositories } from './git-repositories';

describe('CommitGraphs: commit-graph writes after ref changes, in the background, coalesced', () => {
  /** A stand-in for the one git command: each write waits until the test lets it finish. */
  function writer() {
    const calls: { dir: string; background: boolean; finish: (error?: Error) => void }[] = [];
    const repositories = {
      refreshCommitGraph: (dir: string) =>
        new Promise<void>((resolve, reject) => calls.push({ dir, background: inBackground(), finish: (error) => (error ? reject(error) : resolve()) })),
    } as unknown as GitRepositories;
    return { calls, graphs: new CommitGraphs(repositories) };
  }
  const tick = () => new Promise((resolve) => setImmediate(resolve));

  it('returns at once and writes in the background, one write after any number of changes during one', async () => {
    const { calls, graphs } = writer();
    graphs.refreshSoon('/r.git');
    await tick();
    expect(calls.map((call) => [call.dir, call.background])).toEqual([['/r.git', true]]);
    for (let n = 0; n < 5; n++) graphs.refreshSoon('/r.git');
    graphs.refreshSoon('/other.git');
    await tick();
    expect(calls.map((call) => call.dir)).toEqual(['/r.git', '/other.git']);
    calls[0].finish();
    await tick();
    // The five changes during the first write are covered by one more.
    expect(calls.map((call) => call.dir)).toEqual(['/r.git', '/other.git', '/r.git']);
    calls[2].finish();
    calls[1].finish();
    await graphs.settled('/r.git');
    await graphs.settled('/other.git');
    expect(calls).toHaveLength(3);
  });

  it('a failed write is logged, and the next change writes again', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { calls, graphs } = writer();
    graphs.refreshSoon('/gone.git');
    await tick();
    calls[0].finish(new Error('not a git repository'));
    await graphs.settled('/gone.git');
    expect(warn).toHaveBeenCalledWith(expect.stringContaining('not a git repository'));
    graphs.refreshSoon('/gone.git');
    await tick();
    expect(calls).toHaveLength(2);
    calls[1].finish();
    await graphs.settled('/gone.git');
    warn.mockRestore();
  });
});
