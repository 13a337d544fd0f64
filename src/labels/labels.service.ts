import { Injectable } from '@nestjs/common';
import type { EntityManager } from 'typeorm';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { isUniqueViolation, Transactions } from '../database/transactions';
import type { RepositoryTarget } from '../access/repository-policy';
import { repositoryUrls } from '../repos/repository.mapper';
import { OrganizationsService } from '../users/organizations.service';
import { normalizeColor } from './label-colors';
import type { LabelEntity } from './label.entity';
import { LabelOwner, LabelSort, LabelStore } from './label.store';
import { SiteUrls } from '../common/site-urls';

/** Where labels live, as a route resolved it: whose they are and the API address of their list. */
export interface LabelPlace {
  owner: LabelOwner;
  listUrl: string;
}

export interface NewLabel {
  name: string;
  color: string;
  description?: string;
  exclusive?: boolean;
  isArchived?: boolean;
}

export interface LabelChanges {
  name?: string;
  color?: string;
  description?: string;
  exclusive?: boolean;
  isArchived?: boolean;
}

/** More labels than this on one repository or organisation are refused (422): a cap on stored rows. */
export const MAX_LABELS = 1000;

const DUPLICATE = 'label with the same name already exists';

/**
 * What a repository's label write routes answer (403) to a caller who does not write issues, in Forgejo's words.
 * Labels belong to the issues unit; an archived repository's labels stay writable, as Forgejo's label routes do not
 * check the archive.
 */
export const LABEL_WRITE_REFUSED = 'user should have a permission to write to a repo';

/**
 * Labels of repositories and organisations (the first piece of an issue tracker). Repository labels: read by
 * whoever reads the repository, written by those who may push; organisation labels: listed by whoever sees
 * the organisation, read one by one by signed-in callers, written by its owners (as Forgejo).
 */
@Injectable()
export class LabelsService {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly labels: LabelStore,
    private readonly organizations: OrganizationsService,
    private readonly transactions: Transactions,
    private readonly clock: Clock,
  ) {}

  /** The labels of the repository a route resolved (a write route admitted writers of issues, LABEL_WRITE_REFUSED). */
  repositoryPlace(target: RepositoryTarget): LabelPlace {
    const { repo, owner } = target;
    return { owner: { repoId: repo.id, orgId: 0 }, listUrl: `${repositoryUrls(owner, repo, this.siteUrls).api}/labels` };
  }

  async organizationPlace(viewer: AuthContext, orgName: string, access: 'list' | 'read' | 'write'): Promise<LabelPlace> {
    const org = access === 'write' ? await this.organizations.ownedByName(viewer, orgName) : await this.organizations.visibleByName(viewer, orgName);
    if (access === 'read') requireSignedIn(viewer);
    return { owner: { repoId: 0, orgId: org.id }, listUrl: `${this.siteUrls.rootUrl}api/v1/orgs/${encodeURIComponent(org.name)}/labels` };
  }

  list(place: LabelPlace, sort: string, page: PageQuery): Promise<Page<LabelEntity>> {
    return this.labels.list(place.owner, sort === 'reversealphabetically' ? 'reversealphabetically' : ('alphabetically' as LabelSort), page);
  }

  /** By id; a repository label may also be named (Forgejo reads a non-numeric id as the name). */
  async get(place: LabelPlace, idOrName: string): Promise<LabelEntity> {
    const id = labelId(idOrName);
    const label =
      id !== undefined ? await this.labels.findById(place.owner, id) : place.owner.repoId > 0 ? await this.labels.findByName(place.owner, idOrName) : null;
    if (!label) throw new NotFoundError();
    return label;
  }

  async create(place: LabelPlace, input: NewLabel): Promise<LabelEntity> {
    const color = normalizeColor(input.color);
    const now = this.clock.nowUnix();
    return this.unique(() =>
      this.transactions.run(async (tx) => {
        if (await this.labels.findByName(place.owner, input.name, tx)) throw new ConflictError(DUPLICATE);
        if ((await this.labels.count(place.owner, tx)) >= MAX_LABELS) throw new InvalidInputError(`at most ${MAX_LABELS} labels`);
        return this.labels.insert(tx, {
          repoId: place.owner.repoId,
          orgId: place.owner.orgId,
          name: input.name,
          color,
          description: input.description ?? '',
          exclusive: input.exclusive ?? false,
          archivedUnix: input.isArchived ? now : 0,
          createdUnix: now,
          updatedUnix: now,
        });
      }),
    );
  }

  /** As Forgejo, `is_archived` left out means not archived. */
  async edit(place: LabelPlace, rawId: string, input: LabelChanges): Promise<LabelEntity> {
    const id = labelId(rawId);
    if (id === undefined) throw new NotFoundError();
    const color = input.color !== undefined ? normalizeColor(input.color) : undefined;
    const now = this.clock.nowUnix();
    return this.unique(() =>
      this.transactions.run(async (tx) => {
        const label = await this.labels.findById(place.owner, id, tx);
        if (!label) throw new NotFoundError();
        if (input.name !== undefined && input.name !== label.name && (await this.labels.findByName(place.owner, input.name, tx))) {
          throw new ConflictError(DUPLICATE);
        }
        const changes: Partial<LabelEntity> = { updatedUnix: now };
        if (input.name !== undefined) changes.name = input.name;
        if (color !== undefined) changes.color = color;
        if (input.description !== undefined) changes.description = input.description;
        if (input.exclusive !== undefined) changes.exclusive = input.exclusive;
        changes.archivedUnix = input.isArchived ? label.archivedUnix || now : 0;
        await this.labels.update(tx, id, changes);
        return { ...label, ...changes };
      }),
    );
  }

  /** As Forgejo: deleting a label that is not there (or not this place's) answers 204 all the same. */
  async delete(place: LabelPlace, rawId: string): Promise<void> {
    const id = labelId(rawId);
    if (id === undefined) return;
    await this.transactions.run(async (tx) => {
      if (await this.labels.delete(tx, place.owner, id)) for (const listener of this.deletionListeners) await listener(tx, id);
    });
  }

  /** The issue tracker takes a deleted label off its issues, in the deleting transaction. */
  onLabelDeleted(listener: (tx: EntityManager, labelId: number) => Promise<void>): void {
    this.deletionListeners.push(listener);
  }

  private readonly deletionListeners: ((tx: EntityManager, labelId: number) => Promise<void>)[] = [];

  /** A concurrent request that took the name first is refused by the unique index: the same 409. */
  private async unique<T>(work: () => Promise<T>): Promise<T> {
    try {
      return await work();
    } catch (error) {
      if (isUniqueViolation(error)) throw new ConflictError(DUPLICATE);
      throw error;
    }
  }
}

function labelId(raw: string): number | undefined {
  return /^\d{1,15}$/.test(raw) && Number(raw) > 0 ? Number(raw) : undefined;
}
