import type { Signature } from '../git/git-repositories';
import type { UserEntity } from '../users/user.entity';
import { noReplyEmail } from '../users/user.mapper';

/**
 * The creator as git author and committer, as Forgejo signs: the full name (else the login), and the real
 * address unless the user keeps it private, then the no-reply placeholder.
 */
export function gitSignature(user: UserEntity, site: { rootUrl: string; rootHost: string }, whenUnix: number): Signature {
  const safe = (text: string) => text.replace(/[<>\n\r\0]/g, '').trim();
  // git refuses a name made only of the characters it strips from idents (".", ",", ":", ";", quotes, blanks).
  const usable = (text: string) => (/[^\s.,:;<>"'\\]/.test(text) ? text : '');
  const name = usable(safe(user.fullName)) || usable(safe(user.name)) || `user-${user.id}`;
  const email = user.keepEmailPrivate || user.email === '' ? noReplyEmail(user, site) : user.email;
  return { name, email, whenUnix };
}
