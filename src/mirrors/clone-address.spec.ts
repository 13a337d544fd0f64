import { parseCloneAddress, sanitizeCredentialUrls } from './clone-address';

describe('clone_addr rules', () => {
  it.each(['http://example.com/a.git', ' https://example.com/a ', 'git://example.com/a.git'])('accepts %j', (address) => {
    expect(parseCloneAddress(address).href).toBe(new URL(address.trim()).href);
  });

  it.each([
    ['http://u@example.com/x', 'The URL contains credentials.'],
    ['http://u:p@example.com/x', 'The URL contains credentials.'],
    ['http://exa mple.com/x', "migration/cloning from 'http://exa mple.com/x' is not allowed: the provided url is invalid"],
    ['http://example.com:99999/x', "migration/cloning from 'http://example.com:99999/x' is not allowed: the provided url is invalid"],
    ['ssh://git@example.com/x.git', "migration/cloning from 'example.com' is not allowed: the provided url protocol is not allowed"],
    ['ftp://example.com/x', "migration/cloning from 'example.com' is not allowed: the provided url protocol is not allowed"],
    ['git@example.com:owner/x.git', "migration/cloning from 'example.com' is not allowed: the provided url protocol is not allowed"],
    ['/srv/git/x.git', 'You are not allowed to import local repositories.'],
    ['file:///srv/git/x.git', 'You are not allowed to import local repositories.'],
    ['relative/path', 'You are not allowed to import local repositories.'],
  ])('refuses %j with %j', (address, message) => {
    expect(() => parseCloneAddress(address)).toThrow(message);
  });

  it('replaces credentials in URLs of a message', () => {
    expect(sanitizeCredentialUrls("fatal: unable to access 'https://bob:secret@example.com/x/': 403")).toBe(
      "fatal: unable to access 'https://sanitized-credential@example.com/x/': 403",
    );
  });
});
