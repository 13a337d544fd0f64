import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { RowReader } from '../database/row-reader';
import { Transactions } from '../database/transactions';
import { AccessTokenEntity } from './access-token.entity';
import { UserEntity } from './user.entity';

/** The only door to the access_token table. */
@Injectable()
export class AccessTokenStore {
  private readonly tokenRows: RowReader<AccessTokenEntity>;
  private readonly userRows: RowReader<UserEntity>;
  private readonly withOwnerById: string;

  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {
    this.tokenRows = new RowReader(dataSource, AccessTokenEntity);
    this.userRows = new RowReader(dataSource, UserEntity);
    const user = dataSource.driver.escape(dataSource.getMetadata(UserEntity).tableName);
    const token = dataSource.driver.escape(dataSource.getMetadata(AccessTokenEntity).tableName);
    this.withOwnerById = `SELECT ${this.tokenRows.columnList('t')}, ${this.userRows.columnList('u')} FROM ${token} t JOIN ${user} u ON u.id = t.uid WHERE t.id = ?`;
  }

  private tokens(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(AccessTokenEntity);
  }

  insert(tx: EntityManager, token: Partial<AccessTokenEntity>): Promise<AccessTokenEntity> {
    return this.tokens(tx).save(this.tokens(tx).create(token));
  }

  findById(id: number): Promise<AccessTokenEntity | null> {
    return this.tokens().findOneBy({ id });
  }

  /** A token and its owner in one primary-key read: every authenticated request makes it. */
  async findWithOwner(id: number): Promise<{ token: AccessTokenEntity; user: UserEntity } | null> {
    const set = await this.tokenRows.rows(this.withOwnerById, [id]);
    if (set.rows.length === 0) return null;
    return { token: this.tokenRows.hydrate(set, 0, 't'), user: this.userRows.hydrate(set, 0, 'u') };
  }

  /** Candidates for a presented token: lookup is by the indexed last eight characters, then by hash. */
  findByLastEight(lastEight: string): Promise<AccessTokenEntity[]> {
    return this.tokens().findBy({ tokenLastEight: lastEight });
  }

  /** Newest first. */
  async listByUser(uid: number, page: PageQuery): Promise<Page<AccessTokenEntity>> {
    const [items, total] = await this.tokens().findAndCount({
      where: { uid },
      order: { id: 'DESC' },
      skip: page.offset,
      take: page.limit,
    });
    return { items, total };
  }

  listAllByUser(uid: number, tx?: EntityManager): Promise<AccessTokenEntity[]> {
    return this.tokens(tx).find({ where: { uid }, order: { id: 'ASC' } });
  }

  async delete(tx: EntityManager, id: number): Promise<void> {
    await this.tokens(tx).delete({ id });
  }

  async deleteAllOfUser(tx: EntityManager, uid: number): Promise<void> {
    await this.tokens(tx).delete({ uid });
  }

  /** Records a use of the token (at most once a minute): bookkeeping, a time lost with the machine is only older. */
  async touch(id: number, nowUnix: number): Promise<void> {
    await this.transactions.write((tx) => this.tokens(tx).update({ id }, { updatedUnix: nowUnix }), { bookkeeping: true });
  }
}
