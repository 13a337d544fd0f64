import { Injectable } from '@nestjs/common';
import { RepositoryPolicy } from '../access/repository-policy';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthContext } from '../auth/auth-context';
import { InvalidInputError } from '../common/errors';
import { SiteUrls } from '../common/site-urls';
import { UserAccounts } from '../users/user-accounts';
import { UserType } from '../users/user.entity';
import { toUserWire } from '../users/user.mapper';
import type { UserWire } from '../users/user.wire';
import { MAX_NAMES } from './issue-limits';
import { mentionsOf } from './issue-words';

/** Distinct `@name`s of one body looked up as mentions; later ones are not recorded. */
const MAX_MENTIONS = 100;

/**
 * The people of a repository's issues: who may be assigned (the owner, writers), who a body or comment mentions
 * (readers of the issues), and the list GET /repos/{o}/{r}/assignees shows.
 */
@Injectable()
export class IssueParticipants {
  constructor(
    private readonly users: UserAccounts,
    private readonly policy: RepositoryPolicy,
    private readonly siteUrls: SiteUrls,
  ) {}

  /**
   * User ids for assignee names: an unknown name is 422, as is a user who may not be assigned (neither the
   * owner nor someone who may write to the issues).
   */
  async assignable(target: RepositoryTarget, names: string[]): Promise<number[]> {
    const unique = [...new Set(names.filter((name) => name !== '').map((name) => name.toLowerCase()))];
    if (unique.length > MAX_NAMES) throw new InvalidInputError(`at most ${MAX_NAMES} assignees`);
    const ids: number[] = [];
    for (const name of unique) {
      const user = await this.users.byName(name);
      if (!user || user.type !== UserType.Individual)
        throw new InvalidInputError(`Assignee does not exist: [name: user does not exist [uid: 0, name: ${name}]]`);
      if (!(await this.policy.mayBeAssigned(user.id, target.repo, target.owner)))
        throw new InvalidInputError(`user doesn't have access to repo [user_id: ${user.id}, repo_name: ${target.repo.name}]`);
      ids.push(user.id);
    }
    return ids;
  }

  /**
   * The users `text` mentions who may read the repository's issues (individual accounts, as Forgejo records
   * them), by id: what a body or comment adds to the issue's mentions.
   */
  async mentionable(target: RepositoryTarget, text: string): Promise<number[]> {
    const ids: number[] = [];
    for (const name of mentionsOf(text).slice(0, MAX_MENTIONS)) {
      const user = await this.users.byName(name);
      if (!user || user.type !== UserType.Individual) continue;
      const permission = await this.policy.permission(new AuthContext(user, 'password', null), target.repo, target.owner);
      if (permission.canRead('repo.issues')) ids.push(user.id);
    }
    return ids;
  }

  /** GET /repos/{o}/{r}/assignees: everyone who may be assigned, active accounts only, by name. */
  async assignees(target: RepositoryTarget): Promise<UserWire[]> {
    const ids = await this.policy.assignableUserIds(target.repo, target.owner);
    const users = (await this.users.byIds(ids)).filter((user) => user.isActive && user.type === UserType.Individual);
    users.sort((a, b) => (a.lowerName < b.lowerName ? -1 : a.lowerName > b.lowerName ? 1 : 0));
    return users.map((user) => toUserWire(user, target.viewer, this.siteUrls, { seesRepository: true }));
  }
}
