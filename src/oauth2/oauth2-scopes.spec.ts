import { validRedirectUri } from './create-oauth2-application.option';
import { apiScopesOfGrant, apiScopesOfToken, grantsFullAccess } from './oauth2-scopes';

describe('OAuth2 scopes on the API', () => {
  it('gives every scope when the grant names no API scope, as Forgejo does', () => {
    expect(apiScopesOfGrant('').toList()).toEqual(['all']);
    expect(apiScopesOfGrant('openid profile email groups offline_access').toList()).toEqual(['all']);
    expect(apiScopesOfGrant('repo user:email').toList()).toEqual(['all']);
  });

  it('limits the token to the API scopes the grant names', () => {
    expect(apiScopesOfGrant('openid read:user write:repository').toList()).toEqual(['write:repository', 'read:user']);
    expect(apiScopesOfGrant('openid public-only read:repository').toList()).toEqual(['public-only', 'read:repository']);
  });
});

describe('OAuth2 token scopes bounded by the grant', () => {
  it('gives a token naming no API scope its grant’s scopes, not every scope', () => {
    expect(apiScopesOfToken('openid', 'openid read:user').toList()).toEqual(['read:user']);
    expect(apiScopesOfToken('', 'openid read:user').toList()).toEqual(['read:user']);
    expect(apiScopesOfToken('openid', 'openid').toList()).toEqual(['all']);
  });

  it('narrows to what the token asks within the grant, never more', () => {
    expect(apiScopesOfToken('read:repository', 'write:repository read:user').toList()).toEqual(['read:repository']);
    expect(apiScopesOfToken('all', 'read:user').toList()).toEqual(['read:user']);
    expect(apiScopesOfToken('write:user', 'public-only read:user').toList()).toEqual(['public-only', 'read:user']);
    expect(apiScopesOfToken('public-only read:user', 'openid').toList()).toEqual(['public-only', 'read:user']);
  });

  it('says when a grant gives full access', () => {
    expect(grantsFullAccess(['openid'])).toBe(true);
    expect(grantsFullAccess(['openid', 'all'])).toBe(true);
    expect(grantsFullAccess(['openid', 'read:user'])).toBe(false);
    expect(grantsFullAccess(['all', 'public-only'])).toBe(false);
  });
});

describe('redirect URIs of an application', () => {
  it.each(['https://ci.example.com/authorize', 'http://127.0.0.1:8000/cb', 'https://ci.example.com/cb?x=1'])('accepts %s', (uri) => {
    expect(validRedirectUri(uri)).toBe(true);
  });

  it.each([
    'not a url',
    '/relative',
    'javascript:alert(1)',
    'data:text/html,x',
    'https://ci.example.com/cb#x',
    'https://user:pw@ci.example.com/',
    `https://ci.example.com/${'a'.repeat(1100)}`,
  ])('refuses %s', (uri) => {
    expect(validRedirectUri(uri)).toBe(false);
  });
});
