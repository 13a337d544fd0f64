/**
 * Query parameters never logged nor echoed (in Link headers), by their decoded, lower-cased name: `%74oken`
 * and `access%5Ftoken` are `token` and `access_token` to the query parser, so they are to this list too.
 */
export const SECRET_PARAMETERS = new Set(['token', 'access_token', 'password', 'passwd', 'secret', 'otp', 'client_secret', 'code', 'sudo']);

export function isSecretParameter(name: string): boolean {
  return SECRET_PARAMETERS.has(name.trim().toLowerCase());
}
