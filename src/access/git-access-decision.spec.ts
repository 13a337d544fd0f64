import { AccessMode } from './access-mode';
import { decideGitAccess, GitAccessQuestion } from './git-access-decision';
import { RepositoryPermission } from './repository-permission';

// The git doors' decision for a push by someone who does not write the code: only a receive-pack (which
// pre-receive judges ref by ref) may be let in as a maintainer of a pull request's head branch.

const user = { kind: 'user' as const, signedIn: true, restricted: false, scopes: null, publicOnly: false };
const repo = { isPrivate: false, isMirror: false, isArchived: false };

function push(mode: AccessMode, maintainerPush?: () => Promise<boolean>, overrides: Partial<GitAccessQuestion> = {}): GitAccessQuestion {
  return {
    caller: user,
    operation: 'push',
    repo,
    publicPull: true,
    transport: 'http',
    permission: async () => RepositoryPermission.uniform(mode),
    maintainerPush,
    ...overrides,
  };
}

describe('decideGitAccess: maintainers of a pull request from the repository', () => {
  it('a writer is let in as such, without the maintainer question', async () => {
    const asked = jest.fn(async () => true);
    expect(await decideGitAccess(push(AccessMode.Write, asked))).toEqual({ allowed: true });
    expect(asked).not.toHaveBeenCalled();
  });

  it('a reader whom the rule allows some branch is let in as a maintainer; one it does not is refused', async () => {
    expect(await decideGitAccess(push(AccessMode.Read, async () => true))).toEqual({ allowed: true, asMaintainer: true });
    expect(await decideGitAccess(push(AccessMode.Read, async () => false))).toEqual({ allowed: false, refusal: 'not-writer' });
  });

  it('a push whose refs nobody judges (an LFS upload) and a deploy key never ask', async () => {
    expect(await decideGitAccess(push(AccessMode.Read))).toEqual({ allowed: false, refusal: 'not-writer' });
    const asked = jest.fn(async () => true);
    expect(await decideGitAccess(push(AccessMode.Read, asked, { caller: { kind: 'deploy-key' } }))).toEqual({ allowed: false, refusal: 'not-writer' });
    expect(asked).not.toHaveBeenCalled();
  });

  it('mirrors and archived repositories refuse maintainers too', async () => {
    expect(await decideGitAccess(push(AccessMode.Read, async () => true, { repo: { ...repo, isMirror: true } }))).toEqual({
      allowed: false,
      refusal: 'mirror',
    });
    expect(await decideGitAccess(push(AccessMode.Read, async () => true, { repo: { ...repo, isArchived: true } }))).toEqual({
      allowed: false,
      refusal: 'archived',
    });
  });
});
