/**
 * How many of a thing one owner may create, and how large its texts may be, where nothing else bounds them
 * (SECURITY.md lists each with its value). Each count is checked in the transaction that inserts, ordered
 * after every other insert of the same scope, so concurrent requests on several instances cannot overshoot.
 */
export const CAPS = {
  /** Webhooks of one repository, of one user or organisation, and system hooks. */
  hooksPerRepository: 50,
  hooksPerOwner: 50,
  systemHooks: 50,
  /** A webhook's target URL and its signing secret, in characters. */
  hookUrlLength: 2048,
  hookSecretLength: 1024,
  /** Statuses of one commit, all contexts together (every context's history is kept and listed). */
  statusesPerCommit: 1000,
  /** OAuth2 applications of one user. */
  oauth2ApplicationsPerUser: 50,
  /** Teams of one organisation. */
  teamsPerOrganization: 100,
} as const;

/** The refusal's text: what was refused and the number, so the caller knows the rule. */
export function tooMany(what: string, where: string, cap: number): string {
  return `too many ${what}: ${where} may have at most ${cap}`;
}
