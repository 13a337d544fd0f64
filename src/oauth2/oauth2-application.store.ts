import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { OAuth2ApplicationEntity } from './oauth2.entities';

/** The only door to the oauth2_application table. */
@Injectable()
export class OAuth2ApplicationStore {
  constructor(private readonly dataSource: DataSource) {}

  private applications(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(OAuth2ApplicationEntity);
  }

  insert(tx: EntityManager, application: Partial<OAuth2ApplicationEntity>): Promise<OAuth2ApplicationEntity> {
    return this.applications(tx).save(this.applications(tx).create(application));
  }

  /** How many applications the user has, read in `tx`. */
  countOfUser(tx: EntityManager, uid: number): Promise<number> {
    return this.applications(tx).countBy({ uid });
  }

  findOfUser(uid: number, id: number, tx?: EntityManager): Promise<OAuth2ApplicationEntity | null> {
    return this.applications(tx).findOneBy({ id, uid });
  }

  findByClientId(clientId: string): Promise<OAuth2ApplicationEntity | null> {
    return this.applications().findOneBy({ clientId });
  }

  /** Oldest first, as Forgejo lists them. */
  async listByUser(uid: number, page: PageQuery): Promise<Page<OAuth2ApplicationEntity>> {
    const [items, total] = await this.applications().findAndCount({ where: { uid }, order: { id: 'ASC' }, skip: page.offset, take: page.limit });
    return { items, total };
  }

  async update(tx: EntityManager, id: number, changes: Partial<OAuth2ApplicationEntity>): Promise<void> {
    await this.applications(tx).update({ id }, changes);
  }

  async delete(tx: EntityManager, id: number): Promise<void> {
    await this.applications(tx).delete({ id });
  }

  async deleteAllOfUser(tx: EntityManager, uid: number): Promise<void> {
    await this.applications(tx).delete({ uid });
  }

  /** The client ids of a user's applications (to revoke what they were granted when the user goes). */
  async clientIdsOfUser(tx: EntityManager, uid: number): Promise<string[]> {
    return (await this.applications(tx).find({ where: { uid }, select: { clientId: true } })).map((row) => row.clientId);
  }
}
