import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { changeRows, insertUnlessPresent } from '../database/transactions';
import { UserEntity } from '../users/user.entity';
import type { VisibilityScope } from './repository-access';
import { RepositoryEntity } from './repository.entity';
import { likePattern } from '../database/like-pattern';
import { applyScope } from './repository-search-planner';
import { RepoTopicEntity, TopicEntity } from './topic.entities';

/** A topic with the number of repositories carrying it that the viewer may see. */
export interface VisibleTopic {
  topic: TopicEntity;
  repoCount: number;
}

/** The only door to the topic and repo_topic tables. */
@Injectable()
export class TopicStore {
  constructor(private readonly dataSource: DataSource) {}

  /** The topics of a repository, by name. */
  async ofRepository(repoId: number, page: PageQuery, tx?: EntityManager): Promise<Page<TopicEntity>> {
    const [items, total] = await (tx ?? this.dataSource.manager)
      .getRepository(TopicEntity)
      .createQueryBuilder('t')
      .innerJoin(RepoTopicEntity, 'rt', 'rt.topic_id = t.id')
      .where('rt.repo_id = :repoId', { repoId })
      .orderBy('t.name', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getManyAndCount();
    return { items, total };
  }

  /** Every topic name of a repository, sorted, inside the caller's transaction. */
  async namesOf(tx: EntityManager, repoId: number): Promise<string[]> {
    const rows = await tx
      .getRepository(TopicEntity)
      .createQueryBuilder('t')
      .innerJoin(RepoTopicEntity, 'rt', 'rt.topic_id = t.id')
      .where('rt.repo_id = :repoId', { repoId })
      .orderBy('t.name', 'ASC')
      .getMany();
    return rows.map((topic) => topic.name);
  }

  /**
   * Puts a topic on a repository (creating the topic when new); false, changing nothing, when it is there
   * already. The unique indexes decide, also between concurrent requests; the count moves only on a real insert.
   */
  async add(tx: EntityManager, repoId: number, name: string, nowUnix: number): Promise<boolean> {
    await changeRows(tx, insertUnlessPresent(tx, 'topic', ['name', 'repo_count', 'created_unix', 'updated_unix']), [name, 0, nowUnix, nowUnix]);
    const topic = await tx.getRepository(TopicEntity).findOneByOrFail({ name });
    const inserted = await changeRows(tx, insertUnlessPresent(tx, 'repo_topic', ['repo_id', 'topic_id']), [repoId, topic.id]);
    if (inserted === 0) return false;
    await changeRows(tx, 'UPDATE topic SET repo_count = repo_count + 1, updated_unix = ? WHERE id = ?', [nowUnix, topic.id]);
    return true;
  }

  /** Takes a topic off a repository; false when it was not there. */
  async remove(tx: EntityManager, repoId: number, name: string, nowUnix: number): Promise<boolean> {
    const topic = await tx.getRepository(TopicEntity).findOneBy({ name });
    if (!topic) return false;
    const removed = await changeRows(tx, 'DELETE FROM repo_topic WHERE repo_id = ? AND topic_id = ?', [repoId, topic.id]);
    if (removed === 0) return false;
    await changeRows(tx, 'UPDATE topic SET repo_count = repo_count - 1, updated_unix = ? WHERE id = ?', [nowUnix, topic.id]);
    return true;
  }

  /** A repository is going: its topics lose one repository each, and its links go. */
  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<void> {
    await changeRows(tx, 'UPDATE topic SET repo_count = repo_count - 1 WHERE id IN (SELECT topic_id FROM repo_topic WHERE repo_id = ?)', [repoId]);
    await changeRows(tx, 'DELETE FROM repo_topic WHERE repo_id = ?', [repoId]);
  }

  /**
   * GET /topics/search: topics whose name contains `keyword`, each with the number of repositories carrying
   * it that the viewer may see (a topic only private repositories carry is not shown to others: its name would
   * tell of them), most used first, then by name.
   */
  async search(keyword: string, scope: VisibilityScope, page: PageQuery): Promise<Page<VisibleTopic>> {
    const query = this.dataSource
      .getRepository(TopicEntity)
      .createQueryBuilder('t')
      .innerJoin(RepoTopicEntity, 'rt', 'rt.topic_id = t.id')
      .innerJoin(RepositoryEntity, 'r', 'r.id = rt.repo_id')
      .innerJoin(UserEntity, 'o', 'o.id = r.owner_id');
    applyScope(query, scope);
    if (keyword !== '') query.andWhere("t.name LIKE :keyword ESCAPE '!'", { keyword: likePattern(keyword) });
    const counted = await query.clone().select('COUNT(DISTINCT t.id)', 'total').getRawOne<{ total: number | string }>();
    const rows = await query
      .select(['t.id AS id', 't.name AS name', 't.created_unix AS created_unix', 't.updated_unix AS updated_unix', 'COUNT(*) AS visible'])
      .groupBy('t.id')
      .addGroupBy('t.name')
      .addGroupBy('t.created_unix')
      .addGroupBy('t.updated_unix')
      .orderBy('visible', 'DESC')
      .addOrderBy('t.name', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getRawMany<{ id: number | string; name: string; created_unix: number | string; updated_unix: number | string; visible: number | string }>();
    const items = rows.map((row) => ({
      topic: Object.assign(new TopicEntity(), {
        id: Number(row.id),
        name: row.name,
        repoCount: Number(row.visible),
        createdUnix: Number(row.created_unix),
        updatedUnix: Number(row.updated_unix),
      }),
      repoCount: Number(row.visible),
    }));
    return { items, total: Number(counted?.total ?? 0) };
  }
}
