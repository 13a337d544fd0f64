import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { inList, RowReader } from '../database/row-reader';
import { changeRows } from '../database/transactions';
import { EmailAddressEntity } from './email-address.entity';
import { indexUserForSearch, removeUserFromSearch } from './user-search.store';
import { UserEntity, UserType } from './user.entity';

/** The only door to the user and email_address tables. */
@Injectable()
export class UserStore {
  private readonly rows: RowReader<UserEntity>;
  private readonly byId: string;
  private readonly byLowerName: string;

  constructor(private readonly dataSource: DataSource) {
    this.rows = new RowReader(dataSource, UserEntity);
    this.byId = `${this.rows.select()}WHERE id = ?`;
    this.byLowerName = `${this.rows.select()}WHERE lower_name = ?`;
  }

  private users(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(UserEntity);
  }

  private emails(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(EmailAddressEntity);
  }

  findById(id: number, tx?: EntityManager): Promise<UserEntity | null> {
    return this.rows.one(this.byId, [id], tx);
  }

  findByIds(ids: number[], tx?: EntityManager): Promise<UserEntity[]> {
    if (ids.length === 0) return Promise.resolve([]);
    const [list, parameters] = inList(ids);
    return this.rows.all(`${this.rows.select()}WHERE id ${list}`, parameters, tx);
  }

  /** Case-insensitive lookup of a user or organisation by name. */
  findByName(name: string, tx?: EntityManager): Promise<UserEntity | null> {
    return this.rows.one(this.byLowerName, [name.toLowerCase()], tx);
  }

  findIndividualByName(name: string): Promise<UserEntity | null> {
    return this.users().findOneBy({ lowerName: name.toLowerCase(), type: UserType.Individual });
  }

  async nameTaken(name: string, tx?: EntityManager): Promise<boolean> {
    return (await this.users(tx).countBy({ lowerName: name.toLowerCase() })) > 0;
  }

  /** The owner of an e-mail address (any of a user's addresses), if any. */
  async emailOwnerId(email: string, tx?: EntityManager): Promise<number | null> {
    const row = await this.emails(tx).findOneBy({ lowerEmail: email.toLowerCase() });
    return row?.uid ?? null;
  }

  /**
   * The user names of the accounts `emails` belong to, by lower-cased address: an activated address of the
   * account, or its no-reply address `<name>@<noReplyDomain>`. Unknown addresses are absent.
   */
  async namesByEmail(emails: string[], noReplyDomain: string, tx?: EntityManager): Promise<Map<string, string>> {
    const wanted = [...new Set(emails.map((email) => email.toLowerCase()).filter((email) => email !== ''))];
    const names = new Map<string, string>();
    if (wanted.length === 0) return names;
    // One statement, and only the two columns: a push's events name its commits' authors on the push's own path.
    const rows: { email: string; name: string }[] = await this.emails(tx)
      .createQueryBuilder('e')
      .innerJoin(UserEntity, 'u', 'u.id = e.uid')
      .select('e.lower_email', 'email')
      .addSelect('u.name', 'name')
      .where('e.lower_email IN (:...wanted)', { wanted })
      .andWhere('e.is_activated = :activated', { activated: 1 })
      .getRawMany();
    for (const row of rows) names.set(String(row.email), String(row.name));
    const suffix = `@${noReplyDomain.toLowerCase()}`;
    const noReply = wanted.filter((email) => !names.has(email) && email.endsWith(suffix)).map((email) => email.slice(0, -suffix.length));
    if (noReply.length > 0) {
      for (const user of await this.users(tx).findBy({ lowerName: In(noReply) })) names.set(`${user.lowerName}${suffix}`, user.name);
    }
    return names;
  }

  /** Every individual account (no organisations), oldest first. */
  listIndividuals(tx?: EntityManager): Promise<UserEntity[]> {
    return this.users(tx).find({ where: { type: UserType.Individual }, order: { id: 'ASC' } });
  }

  /** Every organisation, by name (the site admin's list). */
  async listOrganizations(page: PageQuery): Promise<Page<UserEntity>> {
    const [items, total] = await this.users().findAndCount({
      where: { type: UserType.Organization },
      order: { lowerName: 'ASC' },
      skip: page.offset,
      take: page.limit,
    });
    return { items, total };
  }

  countIndividuals(tx?: EntityManager): Promise<number> {
    return this.users(tx).countBy({ type: UserType.Individual });
  }

  countAdmins(tx?: EntityManager): Promise<number> {
    return this.users(tx).countBy({ type: UserType.Individual, isAdmin: true });
  }

  /**
   * Inserts a user and, when it has one, its primary e-mail address (verified), and indexes it for search.
   * Run inside a transaction. An organisation's contact address is not an account address: it gets no
   * email_address row (as in Forgejo), so it cannot collide with a user's address.
   */
  async insert(tx: EntityManager, user: Partial<UserEntity>): Promise<UserEntity> {
    const saved = await tx.getRepository(UserEntity).save(tx.getRepository(UserEntity).create(user));
    await indexUserForSearch(tx, saved);
    if (saved.email !== '' && saved.type !== UserType.Organization) {
      await tx.getRepository(EmailAddressEntity).insert({
        uid: saved.id,
        email: saved.email,
        lowerEmail: saved.email.toLowerCase(),
        isActivated: true,
        isPrimary: true,
      });
    }
    return saved;
  }

  async update(tx: EntityManager, id: number, changes: Partial<UserEntity>): Promise<void> {
    if (Object.keys(changes).length > 0) await tx.getRepository(UserEntity).update({ id }, changes);
    // Keep the search index in the same transaction as the searched fields.
    if (SEARCHED_FIELDS.some((field) => changes[field] !== undefined)) {
      const user = await tx.getRepository(UserEntity).findOneBy({ id });
      if (user) await indexUserForSearch(tx, user);
    }
  }

  /** Replaces the primary e-mail address (kept verified, as the admin API sets it). */
  async replacePrimaryEmail(tx: EntityManager, uid: number, email: string): Promise<void> {
    await tx.getRepository(EmailAddressEntity).delete({ uid, isPrimary: true });
    await tx.getRepository(EmailAddressEntity).insert({
      uid,
      email,
      lowerEmail: email.toLowerCase(),
      isActivated: true,
      isPrimary: true,
    });
  }

  /** Verified addresses of a user (Anvil verifies the primary address at creation). */
  async verifiedEmails(uid: number): Promise<string[]> {
    const rows = await this.emails().findBy({ uid, isActivated: true });
    return rows.map((row) => row.email);
  }

  async delete(tx: EntityManager, id: number): Promise<void> {
    await removeUserFromSearch(tx, id);
    await tx.getRepository(EmailAddressEntity).delete({ uid: id });
    await tx.getRepository(UserEntity).delete({ id });
  }

  /**
   * Adds `delta` to a stored counter in SQL (never read-modify-write), inside the caller's transaction.
   */
  async addToCounter(tx: EntityManager, id: number, counter: 'numFollowers' | 'numFollowing' | 'numStars' | 'numRepos', delta: number): Promise<void> {
    const column = columnName(counter);
    await changeRows(tx, `UPDATE ${tx.connection.driver.escape('user')} SET ${column} = ${column} + ? WHERE id = ?`, [delta, id]);
  }
}

/** The fields the user search index is built from (user-search.store.ts). */
const SEARCHED_FIELDS: (keyof UserEntity)[] = ['name', 'lowerName', 'fullName', 'email', 'type'];

function columnName(property: string): string {
  return property.replace(/([a-z\d])([A-Z])/g, '$1_$2').toLowerCase();
}
