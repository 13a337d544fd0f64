import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { DomainError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import type { RepositoryTarget } from '../access/repository-policy';
import { RepositoryAccess, visibilityScope } from './repository-access';
import { RepositoryStore } from './repository.store';
import { isValidTopic, joinTopics, MAX_TOPICS_PER_REPOSITORY, normalizeTopic, sortTopics } from './topic-names';
import type { TopicEntity } from './topic.entities';
import { TopicStore } from './topic.store';

/** Forgejo's 422 for topics: a message and, where it applies, the offending names. */
export class InvalidTopicsError extends DomainError {
  readonly status = 422;
  constructor(
    message: string,
    readonly invalidTopics: string[] | string | null,
  ) {
    super(message);
  }

  override extraFields(): Record<string, unknown> {
    return { invalidTopics: this.invalidTopics };
  }
}

/**
 * Repository topics: read by whoever reads the repository, changed by its administrators (as Forgejo). Every
 * change rewrites the repository's stored topic list in the same transaction as the index rows.
 */
@Injectable()
export class TopicsService {
  constructor(
    private readonly repositoryStore: RepositoryStore,
    private readonly topics: TopicStore,
    private readonly access: RepositoryAccess,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /** GET /repos/{owner}/{repo}/topics */
  async list(target: RepositoryTarget, page: PageQuery): Promise<Page<TopicEntity>> {
    return this.topics.ofRepository(target.repo.id, page);
  }

  /** PUT /repos/{owner}/{repo}/topics: the repository's topics become exactly these. */
  async replace(target: RepositoryTarget, requested: string[]): Promise<void> {
    const repo = target.repo;
    const { valid, invalid } = sortTopics(requested);
    if (valid.length > MAX_TOPICS_PER_REPOSITORY) throw new InvalidTopicsError('Exceeding maximum number of topics per repo', null);
    if (invalid.length > 0) throw new InvalidTopicsError('Topic names are invalid', invalid);
    const now = this.clock.nowUnix();
    await this.transactions.run(async (tx) => {
      const current = await this.topics.namesOf(tx, repo.id);
      for (const name of current) if (!valid.includes(name)) await this.topics.remove(tx, repo.id, name, now);
      for (const name of valid) if (!current.includes(name)) await this.topics.add(tx, repo.id, name, now);
      await this.repositoryStore.update(tx, repo.id, { topics: joinTopics(valid) });
    });
  }

  /** PUT /repos/{owner}/{repo}/topics/{topic}: idempotent; the 26th topic is refused. */
  async add(target: RepositoryTarget, rawTopic: string): Promise<void> {
    const repo = target.repo;
    const topic = validTopic(rawTopic);
    const now = this.clock.nowUnix();
    await this.transactions.run(async (tx) => {
      const current = await this.topics.namesOf(tx, repo.id);
      if (current.includes(topic)) return;
      if (current.length >= MAX_TOPICS_PER_REPOSITORY) throw new InvalidTopicsError('Exceeding maximum allowed topics per repo.', null);
      await this.topics.add(tx, repo.id, topic, now);
      await this.repositoryStore.update(tx, repo.id, { topics: joinTopics([...current, topic]) });
    });
  }

  /** DELETE /repos/{owner}/{repo}/topics/{topic}: 404 when the repository does not carry it. */
  async remove(target: RepositoryTarget, rawTopic: string): Promise<void> {
    const repo = target.repo;
    const topic = validTopic(rawTopic);
    const now = this.clock.nowUnix();
    await this.transactions.run(async (tx) => {
      if (!(await this.topics.remove(tx, repo.id, topic, now))) throw new NotFoundError();
      const remaining = await this.topics.namesOf(tx, repo.id);
      await this.repositoryStore.update(tx, repo.id, { topics: joinTopics(remaining) });
    });
  }

  /** GET /topics/search: topics containing `q`, counted over the repositories the caller may see. */
  async search(viewer: AuthContext, keyword: string, page: PageQuery): Promise<Page<TopicEntity>> {
    const scope = visibilityScope(await this.access.of(viewer));
    const found = await this.topics.search(keyword.trim().toLowerCase(), scope, page);
    return { items: found.items.map((item) => item.topic), total: found.total };
  }
}

function validTopic(raw: string): string {
  const topic = normalizeTopic(raw);
  if (!isValidTopic(topic)) throw new InvalidTopicsError('Topic name is invalid', topic);
  return topic;
}
