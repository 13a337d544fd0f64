import { Injectable } from '@nestjs/common';
import { runAsActor } from '../audit/audit-context';
import { AuditService } from '../audit/audit.service';
import { hashPassword, verifyPassword } from '../auth/secrets';
import { BadRequestError, UnauthorizedError } from '../common/errors';
import { UserAccounts } from '../users/user-accounts';
import { MIN_PASSWORD_LENGTH, UsersService } from '../users/users.service';

/** A hash of nothing in particular, so an unknown user name costs the same time as a wrong password. */
const DECOY_HASH = hashPassword('decoy password, never stored');

/**
 * The self-service password change: who must change the password (`must_change_password`) proves
 * it with the current one, sets a new one, and may then use the API.
 */
@Injectable()
export class ChangePasswordService {
  constructor(
    private readonly users: UserAccounts,
    private readonly usersService: UsersService,
    private readonly audit: AuditService,
  ) {}

  /** `address` is the client's, for the audit log: the form's sign-in and the change are recorded as theirs. */
  async change(userName: string, oldPassword: string, newPassword: string, retype: string, address: string): Promise<string> {
    const user = await this.users.byName(userName);
    const usable = user !== null && !user.isOrganization && user.passwdHash !== '' && user.isActive && !user.prohibitLogin;
    const proven = await verifyPassword(oldPassword, usable ? user.passwdHash : await DECOY_HASH);
    // One answer for an unknown user and a wrong password: the form does not tell which names exist.
    if (!usable || !proven) {
      await this.audit.signIn('failure', 'session', address, null, userName);
      throw new UnauthorizedError('The user name or the current password is incorrect.');
    }
    await this.audit.signIn('success', 'session', address, { id: user.id, name: user.name });
    if (newPassword !== retype) throw new BadRequestError('The new passwords do not match.');
    if ([...newPassword].length < MIN_PASSWORD_LENGTH) throw new BadRequestError(`The new password must have at least ${MIN_PASSWORD_LENGTH} characters.`);
    if (newPassword === oldPassword) throw new BadRequestError('The new password must differ from the current one.');
    await runAsActor({ id: user.id, name: user.name, address }, () => this.usersService.edit(user.name, { password: newPassword, mustChangePassword: false }));
    return user.name;
  }
}
