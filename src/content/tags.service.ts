import type { RepositoryTarget } from '../access/repository-policy';
import { Inject, Injectable } from '@nestjs/common';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { Clock } from '../common/time';
import { Page, PageQuery } from '../common/paging';
import { GitCommand } from '../git/git-command';
import { RefInfo } from '../git/git-refs';
import { createTag, RefChangedError } from '../git/git-writes';
import { isValidRefName } from '../git/ref-names';
import { QUOTA_GATE, QuotaGate } from '../quota/quota-gate';
import { gitSignature } from '../repos/git-signature';
import type { CreateTagOption } from './content.options';
import { ContentRefs } from './content-refs';
import { ContentRepositories, ContentRepository, zeroIdLike } from './content-repository';
import { toTagWire } from './content.mapper';
import type { TagWire } from './content.wire';
import { SiteUrls } from '../common/site-urls';
import { GitReads } from '../git/git-reads';

const TAGS = 'refs/tags/';

/** Tags of a repository (answers as Forgejo's tag API does): lightweight and annotated. */
@Injectable()
export class TagsService {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly repositories: ContentRepositories,
    private readonly reads: GitReads,
    private readonly git: GitCommand,
    private readonly refs: ContentRefs,
    private readonly clock: Clock,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
  ) {}

  /** Newest first, as Forgejo lists tags (`--sort=-creatordate`). */
  async list(repository: RepositoryTarget, query: PageQuery): Promise<Page<TagWire>> {
    const target = this.repositories.open(repository);
    const all = await this.repositories.withGit(() => this.reads.refs.refs(target.dir, TAGS, '-creatordate'));
    return { items: all.slice(query.offset, query.offset + query.limit).map((ref) => toTagWire(target.urls, ref)), total: all.length };
  }

  async get(repository: RepositoryTarget, tag: string): Promise<TagWire> {
    const target = this.repositories.open(repository);
    const ref = await this.repositories.withGit(() => this.find(target, tag));
    if (!ref) throw new NotFoundError();
    return toTagWire(target.urls, ref);
  }

  async delete(repository: RepositoryTarget, tag: string): Promise<void> {
    const target = this.repositories.open(repository);
    await this.repositories.deleteRef(repository.viewer, target, () => this.find(target, tag));
  }

  /**
   * A message makes an annotated tag, tagged by the caller as the first commit of a repository is signed
   * (full name, else login; the no-reply address when the e-mail is private). Order: 404 → 403 → 422 → quota
   * 413 → target 404 → existing tag 409.
   */
  async create(repository: RepositoryTarget, body: CreateTagOption): Promise<TagWire> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    if (!isValidRefName(`${TAGS}${body.tag_name}`) || body.tag_name.startsWith('-')) {
      throw new InvalidInputError(`Tag name is invalid: ${body.tag_name}`);
    }
    await this.quota.assertCanWrite({ id: target.owner.id, name: target.owner.name }, 'size:repos:all');
    const tagger = gitSignature(viewer.user!, this.siteUrls, this.clock.nowUnix());
    const ref = await this.repositories.withGit(async () => {
      const commit = await this.refs.resolve(target, body.target || undefined);
      if (!commit) throw new NotFoundError('target not found');
      try {
        await createTag(this.git, target.dir, { name: body.tag_name, target: commit.commit, message: body.message, tagger });
      } catch (error) {
        if (error instanceof RefChangedError) throw new ConflictError(`tag ${body.tag_name} already exists`);
        throw error;
      }
      return this.find(target, body.tag_name);
    });
    if (!ref) throw new NotFoundError();
    await this.repositories.recordRefChanges(viewer, target, [{ ref: ref.ref, oldId: zeroIdLike(ref.oid), newId: ref.oid }]);
    return toTagWire(target.urls, ref);
  }

  private async find(target: ContentRepository, tag: string): Promise<RefInfo | undefined> {
    const refs = await this.reads.refs.refs(target.dir, `${TAGS}${tag}`);
    return refs.find((ref) => ref.ref === `${TAGS}${tag}`);
  }
}
