import { parseSshCommand } from './ssh-command';

describe('parseSshCommand', () => {
  it.each([
    [`git-upload-pack 'alice/proj.git'`, { verb: 'git-upload-pack', owner: 'alice', repo: 'proj' }],
    [`git-upload-pack '/alice/proj.git'`, { verb: 'git-upload-pack', owner: 'alice', repo: 'proj' }],
    [`git-receive-pack "alice/proj"`, { verb: 'git-receive-pack', owner: 'alice', repo: 'proj' }],
    [`git-upload-archive alice/proj.git extra words`, { verb: 'git-upload-archive', owner: 'alice', repo: 'proj' }],
    [`git-upload-pack 'alice/proj.git.git'`, { verb: 'git-upload-pack', owner: 'alice', repo: 'proj.git' }],
    [`git-lfs-authenticate 'alice/proj.git' upload`, { verb: 'git-lfs-authenticate', owner: 'alice', repo: 'proj', lfsOperation: 'upload' }],
  ])('accepts %s', (command, expected) => {
    expect(parseSshCommand(command)).toEqual(expected);
  });

  it.each([
    ['git-upload-pack', 'Too few arguments'],
    ['', 'Too few arguments'],
    [`git-lfs-transfer alice/proj download`, 'Unknown git command'],
    [`git-lfs-authenticate alice/proj`, 'Unknown LFS verb'],
    [`git-lfs-authenticate alice/proj delete`, 'Unknown LFS verb'],
    [`ls -la`, 'Unknown git command'],
    [`git-upload-pack 'proj.git'`, 'Invalid repository path'],
    [`git-upload-pack 'alice/a/b.git'`, 'Invalid repo name'],
    [`git-upload-pack 'alice/'`, 'Invalid repo name'],
    [`git-upload-pack alice/proj; rm -rf /`, 'Error parsing arguments'],
    [`git-upload-pack alice/proj | cat`, 'Error parsing arguments'],
    [`git-upload-pack 'alice/proj`, 'Error parsing arguments'],
    [`git-upload-pack "alice/proj`, 'Error parsing arguments'],
    [`git-upload-pack alice/proj\\`, 'Error parsing arguments'],
    [`git-upload-pack 'alice/proj\\'"`, 'Error parsing arguments'],
  ])('refuses %s with %s', (command, error) => {
    expect(parseSshCommand(command)).toEqual({ error });
  });
});
