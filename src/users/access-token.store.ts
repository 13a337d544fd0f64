import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { AccessTokenEntity } from './access-token.entity';

/** The only door to the access_token table. */
@Injectable()
export class AccessTokenStore {
  constructor(private readonly dataSource: DataSource) {}

  private tokens(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(AccessTokenEntity);
  }

  insert(tx: EntityManager, token: Partial<AccessTokenEntity>): Promise<AccessTokenEntity> {
    return this.tokens(tx).save(this.tokens(tx).create(token));
  }

  findById(id: number): Promise<AccessTokenEntity | null> {
    return this.tokens().findOneBy({ id });
  }

  /** Candidates for a presented token: lookup is by the indexed last eight characters, then by hash. */
  findByLastEight(lastEight: string): Promise<AccessTokenEntity[]> {
    return this.tokens().findBy({ tokenLastEight: lastEight });
  }

  /** Newest first (behaviour 6, D18). */
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

  async touch(id: number, nowUnix: number): Promise<void> {
    await this.tokens().update({ id }, { updatedUnix: nowUnix });
  }
}
