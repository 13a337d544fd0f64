import { ApiSchema } from '@nestjs/swagger';
import { Field, FieldRule } from '../common/fields';

/** Most redirect URIs one application may register. */
export const MAX_REDIRECT_URIS = 16;

/**
 * Each redirect URI is an absolute http(s) URL without a fragment: the provider sends the code there, to the
 * letter, so nothing vaguer may be registered.
 */
const VALID_URL_LIST: FieldRule = {
  name: 'ValidUrlList',
  test: (value) => Array.isArray(value) && value.every((item) => typeof item === 'string' && validRedirectUri(item)),
};

export function validRedirectUri(uri: string): boolean {
  if (uri.length > 1024) return false;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return false;
  }
  return (url.protocol === 'http:' || url.protocol === 'https:') && url.hash === '' && !uri.includes('#') && url.username === '' && url.password === '';
}

@ApiSchema({ name: 'CreateOAuth2ApplicationOptions', description: 'CreateOAuth2ApplicationOptions holds options to create an oauth2 application' })
export class CreateOAuth2ApplicationOptions {
  @Field({ field: 'Name', type: 'string', required: true, maxSize: 255 })
  name: string;

  @Field({ field: 'ConfidentialClient', type: 'boolean' })
  confidential_client?: boolean;

  @Field({ field: 'RedirectURIs', type: 'strings', required: true, minSize: 1, maxSize: MAX_REDIRECT_URIS, rules: [VALID_URL_LIST] })
  redirect_uris: string[];
}
