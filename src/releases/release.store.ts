import { Injectable } from '@nestjs/common';
import { DataSource, EntityManager, In } from 'typeorm';
import { Page, PageQuery } from '../common/paging';
import { RepositoryEntity } from '../repos/repository.entity';
import { likePattern } from '../database/like-pattern';
import { Transactions } from '../database/transactions';
import { AttachmentEntity, ReleaseEntity } from './release.entities';

export interface ReleaseFilter {
  includeDrafts: boolean;
  draft?: boolean;
  prerelease?: boolean;
  /** Forgejo's `q`: part of the tag name, title or notes, any case; '' for all. */
  keyword?: string;
}

/** An attachment counted against its repository owner's quota, with what its URLs need. */
export interface OwnedAttachment {
  attachment: AttachmentEntity;
  repoName: string;
  releaseId: number;
  tagName: string;
}

/** The only door to the release and attachment tables. */
@Injectable()
export class ReleaseStore {
  constructor(
    private readonly dataSource: DataSource,
    private readonly transactions: Transactions,
  ) {}

  private releases(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(ReleaseEntity);
  }

  private attachments(tx?: EntityManager) {
    return (tx ?? this.dataSource.manager).getRepository(AttachmentEntity);
  }

  insert(tx: EntityManager, release: Partial<ReleaseEntity>): Promise<ReleaseEntity> {
    return this.releases(tx).save(this.releases(tx).create(release));
  }

  findById(repoId: number, id: number, tx?: EntityManager): Promise<ReleaseEntity | null> {
    return this.releases(tx).findOneBy({ repoId, id });
  }

  findByTag(repoId: number, tagName: string, tx?: EntityManager): Promise<ReleaseEntity | null> {
    return this.releases(tx).findOneBy({ repoId, tagName });
  }

  /** Newest first (ties by id, so that pages never overlap). */
  async list(repoId: number, filter: ReleaseFilter, page: PageQuery): Promise<Page<ReleaseEntity>> {
    const query = this.releases().createQueryBuilder('rel').where('rel.repo_id = :repoId', { repoId });
    if (!filter.includeDrafts) query.andWhere('rel.is_draft = 0');
    if (filter.draft !== undefined) query.andWhere('rel.is_draft = :draft', { draft: filter.draft ? 1 : 0 });
    if (filter.prerelease !== undefined) query.andWhere('rel.is_prerelease = :prerelease', { prerelease: filter.prerelease ? 1 : 0 });
    if (filter.keyword) {
      query.andWhere(
        "(LOWER(rel.tag_name) LIKE :keyword ESCAPE '!' OR LOWER(rel.title) LIKE :keyword ESCAPE '!' OR LOWER(rel.note) LIKE :keyword ESCAPE '!')",
        {
          keyword: likePattern(filter.keyword.toLowerCase()),
        },
      );
    }
    const total = await query.getCount();
    const items = await query.orderBy('rel.created_unix', 'DESC').addOrderBy('rel.id', 'DESC').offset(page.offset).limit(page.limit).getMany();
    return { items, total };
  }

  /** The newest published release that is not a pre-release. */
  latest(repoId: number): Promise<ReleaseEntity | null> {
    return this.releases().findOne({ where: { repoId, isDraft: false, isPrerelease: false }, order: { createdUnix: 'DESC', id: 'DESC' } });
  }

  async update(tx: EntityManager, id: number, changes: Partial<ReleaseEntity>): Promise<void> {
    if (Object.keys(changes).length > 0) await this.releases(tx).update({ id }, changes);
  }

  /** Deletes the release and its attachment rows; returns the uuids whose files must go after the commit. */
  async delete(tx: EntityManager, id: number): Promise<string[] | null> {
    const uuids = (await this.attachments(tx).find({ select: { uuid: true }, where: { releaseId: id } })).map((row) => row.uuid);
    const result = await this.releases(tx).delete({ id });
    if ((result.affected ?? 0) === 0) return null;
    await this.attachments(tx).delete({ releaseId: id });
    return uuids;
  }

  /** Every release and attachment row of a repository; returns the attachment uuids. */
  async deleteAllOfRepository(tx: EntityManager, repoId: number): Promise<string[]> {
    const uuids = (await this.attachments(tx).find({ select: { uuid: true }, where: { repoId } })).map((row) => row.uuid);
    await this.attachments(tx).delete({ repoId });
    await this.releases(tx).delete({ repoId });
    return uuids;
  }

  /** The attachments of these releases, oldest first. */
  attachmentsOf(releaseIds: number[]): Promise<AttachmentEntity[]> {
    if (releaseIds.length === 0) return Promise.resolve([]);
    return this.attachments().find({ where: { releaseId: In(releaseIds) }, order: { id: 'ASC' } });
  }

  findAttachment(releaseId: number, id: number): Promise<AttachmentEntity | null> {
    return this.attachments().findOneBy({ releaseId, id });
  }

  findAttachmentByUuid(uuid: string): Promise<AttachmentEntity | null> {
    return this.attachments().findOneBy({ uuid });
  }

  /** The first attachment of that name (names need not be unique within a release, as in Forgejo). */
  findAttachmentByName(releaseId: number, name: string): Promise<AttachmentEntity | null> {
    return this.attachments().findOne({ where: { releaseId, name }, order: { id: 'ASC' } });
  }

  findReleaseOf(attachment: AttachmentEntity): Promise<ReleaseEntity | null> {
    return this.releases().findOneBy({ id: attachment.releaseId });
  }

  insertAttachment(tx: EntityManager, attachment: Partial<AttachmentEntity>): Promise<AttachmentEntity> {
    return this.attachments(tx).save(this.attachments(tx).create(attachment));
  }

  async updateAttachment(id: number, changes: Partial<Pick<AttachmentEntity, 'name' | 'externalUrl'>>): Promise<void> {
    if (Object.keys(changes).length > 0) await this.transactions.write((tx) => this.attachments(tx).update({ id }, changes));
  }

  async deleteAttachment(tx: EntityManager, id: number): Promise<boolean> {
    const result = await this.attachments(tx).delete({ id });
    return (result.affected ?? 0) > 0;
  }

  async countDownload(id: number): Promise<void> {
    // Bookkeeping: a count lost with the machine is a download not counted.
    await this.transactions.write((tx) => this.attachments(tx).increment({ id }, 'downloadCount', 1), { bookkeeping: true });
  }

  /** Bytes of the release attachments in the owner's repositories (quota item `attachmentsReleases`). */
  async bytesOfOwner(ownerId: number): Promise<number> {
    const row: { total: number | string | null } | undefined = await this.attachments()
      .createQueryBuilder('a')
      .innerJoin(RepositoryEntity, 'r', 'r.id = a.repo_id')
      .select('SUM(a.size)', 'total')
      .where('r.owner_id = :ownerId', { ownerId })
      .getRawOne();
    return Number(row?.total ?? 0);
  }

  /** The owner's stored release attachments (external assets hold no bytes), largest first. */
  async listOfOwner(ownerId: number, page: PageQuery): Promise<Page<OwnedAttachment>> {
    const query = this.attachments()
      .createQueryBuilder('a')
      .innerJoin(RepositoryEntity, 'r', 'r.id = a.repo_id')
      .innerJoin(ReleaseEntity, 'rel', 'rel.id = a.release_id')
      .where('r.owner_id = :ownerId', { ownerId })
      .andWhere("a.external_url = ''");
    const total = await query.getCount();
    const rows: Record<string, unknown>[] = await query
      .select(['a.id AS id', 'a.uuid AS uuid', 'a.name AS name', 'a.size AS size', 'a.repo_id AS repo_id', 'a.release_id AS release_id'])
      .addSelect('r.name', 'repo_name')
      .addSelect('rel.tag_name', 'tag_name')
      .orderBy('a.size', 'DESC')
      .addOrderBy('a.id', 'ASC')
      .offset(page.offset)
      .limit(page.limit)
      .getRawMany();
    const items = rows.map((row) => ({
      attachment: Object.assign(new AttachmentEntity(), {
        id: Number(row.id),
        uuid: String(row.uuid),
        name: String(row.name),
        size: Number(row.size),
        repoId: Number(row.repo_id),
        releaseId: Number(row.release_id),
      }),
      repoName: String(row.repo_name),
      releaseId: Number(row.release_id),
      tagName: String(row.tag_name),
    }));
    return { items, total };
  }
}
