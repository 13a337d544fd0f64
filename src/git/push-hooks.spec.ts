import { isSafeGitProtocol } from './git-processes';
import { isZeroId, parseRefUpdates } from './push-hooks';

describe('hook input', () => {
  it('parses the ref lines git gives pre-receive and post-receive', () => {
    const zero = '0'.repeat(40);
    const id = 'a'.repeat(40);
    expect(parseRefUpdates(`${zero} ${id} refs/heads/main\n${id} ${zero} refs/tags/v1\n\n`)).toEqual([
      { oldId: zero, newId: id, ref: 'refs/heads/main' },
      { oldId: id, newId: zero, ref: 'refs/tags/v1' },
    ]);
  });

  it('knows the zero id of both object formats', () => {
    expect(isZeroId('0'.repeat(40))).toBe(true);
    expect(isZeroId('0'.repeat(64))).toBe(true);
    expect(isZeroId(`${'0'.repeat(39)}1`)).toBe(false);
  });
});

describe('isSafeGitProtocol (Forgejo safeGitProtocolHeader)', () => {
  it.each(['version=2', 'version=1', 'version=2:object-format=sha256'.replace('-', '')])('passes %s', (value) => {
    expect(isSafeGitProtocol(value)).toBe(true);
  });

  it.each(['', 'version=2;x', 'version', 'version=2:', 'version=2\nX=1', 'a b=c'])('ignores %j', (value) => {
    expect(isSafeGitProtocol(value)).toBe(false);
  });
});
