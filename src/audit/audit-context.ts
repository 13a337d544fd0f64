import { currentScope, runInScope } from '../common/request-scope';

/** Who acts, from where: a signed-in caller of the API, or the admin command line. */
export interface AuditActor {
  /** 0 when the actor is no user (the command line, an anonymous caller). */
  id: number;
  name: string;
  address: string;
  /** The site admin acting through sudo as `name`. */
  sudoBy?: string;
}

/** The admin command line: no user, no address. */
export const CLI_ACTOR: AuditActor = { id: 0, name: 'cli', address: 'local' };

/**
 * Runs `work` (the rest of a request's handling, a CLI command) on behalf of `actor`: every audit event it
 * records names them, without each service being handed the caller for that purpose alone.
 */
export function runAsActor<T>(actor: AuditActor, work: () => T): T {
  return runInScope({ actor }, work);
}

export function currentActor(): AuditActor | undefined {
  return currentScope()?.actor;
}
