import { AuditService } from '../audit/audit.service';
import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { ForbiddenError, InvalidInputError, NotFoundError } from '../common/errors';
import { CAPS, tooMany } from '../common/caps';
import { Claims } from '../claims/claims';
import type { Page, PageQuery } from '../common/paging';
import { Clock } from '../common/time';
import { Transactions } from '../database/transactions';
import { GitPushCommits } from '../git/git-push-commits';
import { RepositoryPaths } from '../git/repository-paths';
import { SecretBox } from '../secrets/secret-box';
import type { RepositoryTarget } from '../access/repository-policy';
import { repositoryUrls, toRepositoryWire } from '../repos/repository.mapper';
import type { RepositoryEntity } from '../repos/repository.entity';
import { toUserWire } from '../users/user.mapper';
import type { UserEntity } from '../users/user.entity';
import { OrganizationPolicy } from '../access/organization-policy';
import { UserAccounts } from '../users/user-accounts';
import { isValidBranchFilter } from './branch-filter';
import { toDeliveryWire, toHookWire } from './hook.mapper';
import type { CreateHookOption, EditHookOption } from './hook.options';
import type { HookWire, WebhookDeliveryWire } from './hook.wire';
import { WebhookDispatcher } from './webhook-dispatcher';
import type { WebhookEntity } from './webhook.entities';
import { newDeliveryUuid, WebhookOutbox } from './webhook-outbox';
import { pushBody } from './webhook-payloads';
import { HookScope, WebhookStore } from './webhook.store';
import { SiteUrls } from '../common/site-urls';

/** Formats Anvil sends; every other type Forgejo knows (slack, discord, …) is refused. */
export const HOOK_TYPES = ['forgejo', 'gitea', 'gogs'];

/** Event names a hook may choose (Forgejo's list); Anvil emits create, delete, push, issues, issue_comment, pull_request, repository, release, package, status. */
const KNOWN_EVENTS = new Set([
  'create',
  'delete',
  'fork',
  'push',
  'issues',
  'issue_assign',
  'issue_label',
  'issue_milestone',
  'issue_comment',
  'pull_request',
  'pull_request_assign',
  'pull_request_label',
  'pull_request_milestone',
  'pull_request_comment',
  'pull_request_review',
  'pull_request_review_request',
  'pull_request_sync',
  'wiki',
  'repository',
  'release',
  'package',
  'status',
]);

/** Which hooks a route manages: a repository's, an organisation's, the caller's own, or the system's. */
export type HookPlace = { kind: 'repository'; target: RepositoryTarget } | { kind: 'organization'; org: string } | { kind: 'user' } | { kind: 'system' };

/** A place whose door admitted the caller (HooksService.admit): the hooks it holds, and the repository of a repository's. */
export interface AdmittedPlace {
  place: HookPlace;
  scope: HookScope;
  repository?: { repo: RepositoryEntity; owner: UserEntity };
}

/** What a repository's hook routes answer (403) to a caller who is not the repository's admin, in Forgejo's words. */
export const REPOSITORY_HOOKS_REFUSED = 'user should be an owner or a collaborator with admin write of a repo';

/**
 * Webhooks of every scope. Who may manage them is decided in `resolve`, the one place: repository
 * administrators (owner, owners of the owning organisation, site admins), organisation owners and site admins,
 * the signed-in user for their own hooks, site admins for system hooks.
 */
@Injectable()
export class HooksService {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly store: WebhookStore,
    private readonly users: UserAccounts,
    private readonly organizationPolicy: OrganizationPolicy,
    private readonly box: SecretBox,
    private readonly transactions: Transactions,
    private readonly outbox: WebhookOutbox,
    private readonly dispatcher: WebhookDispatcher,
    private readonly pushCommits: GitPushCommits,
    private readonly paths: RepositoryPaths,
    private readonly audit: AuditService,
    private readonly clock: Clock,
    private readonly claims: Claims,
  ) {}

  /** Every hook route's door, before its body (as Forgejo): repository or organisation 404 → sign-in 401 → manager 403. */
  async admit(viewer: AuthContext, place: HookPlace): Promise<AdmittedPlace> {
    switch (place.kind) {
      case 'repository': {
        // The route admitted repository admins only (REPOSITORY_HOOKS_REFUSED).
        const { repo, owner } = place.target;
        return { place, scope: { kind: 'repository', repoId: repo.id }, repository: { repo, owner } };
      }
      case 'organization': {
        const org = await this.users.byName(place.org);
        if (!org || !org.isOrganization) throw new NotFoundError();
        requireSignedIn(viewer);
        if (!(await this.organizationPolicy.isOwner(viewer, org.id))) throw new ForbiddenError('must be an organization owner');
        return { place, scope: { kind: 'owner', ownerId: org.id } };
      }
      case 'user':
        requireSignedIn(viewer);
        return { place, scope: { kind: 'owner', ownerId: viewer.user.id } };
      case 'system':
        requireSignedIn(viewer);
        if (!viewer.isAdmin) throw new ForbiddenError('user should be the site admin');
        return { place, scope: { kind: 'system' } };
    }
  }

  async list(viewer: AuthContext, place: HookPlace, page: PageQuery): Promise<Page<HookWire>> {
    const { scope } = await this.admit(viewer, place);
    const found = await this.store.list(scope, page);
    return { items: found.items.map(toHookWire), total: found.total };
  }

  async get(viewer: AuthContext, place: HookPlace, id: number): Promise<HookWire> {
    return toHookWire(await this.hook(viewer, place, id));
  }

  /** POST …/hooks, once the door admitted the caller and the body is bound (the route's answers 401/403/404 come first). */
  async create({ place, scope }: AdmittedPlace, option: CreateHookOption): Promise<HookWire> {
    if (!HOOK_TYPES.includes(option.type)) throw new InvalidInputError(`Invalid hook type: ${option.type}`);
    const config = stringConfig(option.config);
    for (const name of ['url', 'content_type']) if (config[name] === undefined) throw new InvalidInputError(`Missing config option: ${name}`);
    const secret = checkedSecret(config.secret);
    const now = this.clock.nowUnix();
    const hook = await this.transactions.run(async (tx) => {
      await this.claims.serializeWriters(tx, `hooks:${scopeKey(scope)}`);
      const cap = hookCap(scope);
      if ((await this.store.count(tx, scope)) >= cap.count) throw new InvalidInputError(tooMany('webhooks', cap.where, cap.count));
      const created = await this.store.insert(tx, {
        repoId: scope.kind === 'repository' ? scope.repoId : 0,
        ownerId: scope.kind === 'owner' ? scope.ownerId : 0,
        isSystem: scope.kind === 'system',
        type: option.type,
        url: checkedUrl(config.url),
        httpMethod: checkedMethod(config.http_method, option.type),
        contentType: checkedContentType(config.content_type),
        secret: secret ? this.box.seal(secret) : '',
        authorizationHeader: option.authorization_header ? this.box.seal(option.authorization_header) : '',
        events: chosenEvents(option.events),
        branchFilter: checkedBranchFilter(option.branch_filter ?? ''),
        isActive: option.active ?? false,
        createdUnix: now,
        updatedUnix: now,
      });
      await this.audit.record(tx, { action: 'hook.create', target: hookTarget(created, place), detail: hookFacts(created) });
      return created;
    });
    return toHookWire(hook);
  }

  /** PATCH …/hooks/{id}, once the door admitted the caller and the body is bound: then the hook (404), as Forgejo. */
  async edit({ place, scope }: AdmittedPlace, id: number, option: EditHookOption): Promise<HookWire> {
    const hook = await this.hookIn(scope, id);
    const changes: Partial<WebhookEntity> = {};
    if (option.config) {
      const config = stringConfig(option.config);
      if (config.url !== undefined) changes.url = checkedUrl(config.url);
      if (config.content_type !== undefined) changes.contentType = checkedContentType(config.content_type);
      if (config.http_method !== undefined) changes.httpMethod = checkedMethod(config.http_method, hook.type);
      if (config.secret !== undefined) changes.secret = config.secret === '' ? '' : this.box.seal(checkedSecret(config.secret)!);
    }
    if (option.events !== undefined && option.events !== null && option.events.length > 0) changes.events = chosenEvents(option.events);
    if (option.branch_filter !== undefined && option.branch_filter !== null) changes.branchFilter = checkedBranchFilter(option.branch_filter);
    if (option.authorization_header !== undefined && option.authorization_header !== null) {
      changes.authorizationHeader = option.authorization_header === '' ? '' : this.box.seal(option.authorization_header);
    }
    if (option.active !== undefined && option.active !== null) changes.isActive = option.active;
    changes.updatedUnix = this.clock.nowUnix();
    await this.transactions.run(async (tx) => {
      await this.store.update(tx, hook.id, changes);
      // Which fields changed, never their values: the secret and authorization header are secrets.
      const fields = Object.keys(changes)
        .filter((key) => key !== 'updatedUnix')
        .map((key) => (key === 'secret' ? 'signing_key' : key === 'authorizationHeader' ? 'auth_header' : key));
      await this.audit.record(tx, { action: 'hook.edit', target: hookTarget(hook, place), detail: { ...hookFacts({ ...hook, ...changes }), fields } });
    });
    return toHookWire({ ...hook, ...changes });
  }

  async delete(viewer: AuthContext, place: HookPlace, id: number): Promise<void> {
    const hook = await this.hook(viewer, place, id);
    await this.transactions.run(async (tx) => {
      await this.store.delete(tx, hook.id);
      await this.audit.record(tx, { action: 'hook.delete', target: hookTarget(hook, place), detail: hookFacts(hook) });
    });
  }

  /** POST …/hooks/{id}/tests: Forgejo's test push (the head commit of `ref`, else the default branch) to this hook. */
  async test(viewer: AuthContext, place: HookPlace & { kind: 'repository' }, id: number, ref: string): Promise<void> {
    const resolved = await this.admit(viewer, place);
    const hook = await this.store.find(resolved.scope, id);
    if (!hook) throw new NotFoundError();
    const { repo, owner } = resolved.repository!;
    const branch = ref.replace(/^refs\/heads\//, '') || repo.defaultBranch;
    const site = this.siteUrls;
    const dir = this.paths.repository(owner.name, repo.name);
    const head = repo.isEmpty ? null : await this.pushCommits.read(dir, '0', `refs/heads/${branch}`, 1).catch(() => null);
    const commit = head?.commits[0];
    const sha = commit?.id ?? '0'.repeat(40);
    const sender = toUserWire(viewer.user!, viewer, site);
    const repository = toRepositoryWire(repo, owner, viewer, { admin: true, push: true, pull: true }, site);
    const body = pushBody(
      { ref: `refs/heads/${branch}`, before: sha, after: sha, commits: commit ? [commit] : [], totalCommits: commit ? 1 : 0 },
      repositoryUrls(owner, repo, site).html,
      repository,
      sender,
      1,
    );
    body.compare_url = '';
    await this.transactions.run((tx) => this.outbox.enqueue(tx, { event: 'push', branch: null, body }, [hook]));
    this.dispatcher.wake();
  }

  async deliveries(viewer: AuthContext, place: HookPlace, id: number, page: PageQuery): Promise<Page<WebhookDeliveryWire>> {
    const hook = await this.hook(viewer, place, id);
    const found = await this.store.history(hook.id, page);
    return { items: found.items.map(toDeliveryWire), total: found.total };
  }

  async delivery(viewer: AuthContext, place: HookPlace, id: number, uuid: string): Promise<WebhookDeliveryWire> {
    const hook = await this.hook(viewer, place, id);
    const delivery = await this.store.findDelivery(hook.id, uuid);
    if (!delivery) throw new NotFoundError();
    return toDeliveryWire(delivery);
  }

  /** A new delivery of the same event to the same hook, with a UUID of its own, queued behind the others. */
  async redeliver(viewer: AuthContext, place: HookPlace, id: number, uuid: string): Promise<WebhookDeliveryWire> {
    const hook = await this.hook(viewer, place, id);
    const original = await this.store.findDelivery(hook.id, uuid);
    if (!original) throw new NotFoundError();
    const copy = await this.transactions.run((tx) => this.store.redeliver(tx, original, newDeliveryUuid(), Date.now()));
    this.dispatcher.wake();
    return toDeliveryWire(copy);
  }

  private async hook(viewer: AuthContext, place: HookPlace, id: number): Promise<WebhookEntity> {
    return this.hookIn((await this.admit(viewer, place)).scope, id);
  }

  private async hookIn(scope: HookScope, id: number): Promise<WebhookEntity> {
    const hook = Number.isSafeInteger(id) && id > 0 ? await this.store.find(scope, id) : null;
    if (!hook) throw new NotFoundError();
    return hook;
  }
}

function stringConfig(config: Record<string, unknown>): Record<string, string | undefined> {
  const result: Record<string, string | undefined> = {};
  for (const [key, value] of Object.entries(config)) {
    if (value === null || value === undefined) continue;
    if (typeof value !== 'string') throw new InvalidInputError(`config option ${key} must be a string`);
    result[key] = value;
  }
  return result;
}

/** The scope's name in the claim ledger, which orders concurrent hook creations in it. */
function scopeKey(scope: HookScope): string {
  return scope.kind === 'repository' ? `repo:${scope.repoId}` : scope.kind === 'owner' ? `owner:${scope.ownerId}` : 'system';
}

function hookCap(scope: HookScope): { count: number; where: string } {
  if (scope.kind === 'repository') return { count: CAPS.hooksPerRepository, where: 'a repository' };
  if (scope.kind === 'owner') return { count: CAPS.hooksPerOwner, where: 'a user or organization' };
  return { count: CAPS.systemHooks, where: 'the site' };
}

function checkedSecret(value: string | undefined): string | undefined {
  if (value !== undefined && value.length > CAPS.hookSecretLength)
    throw new InvalidInputError(`the secret is too long: at most ${CAPS.hookSecretLength} characters`);
  return value;
}

function checkedUrl(value: string | undefined): string {
  if (value !== undefined && value.length > CAPS.hookUrlLength) throw new InvalidInputError(`Invalid url: at most ${CAPS.hookUrlLength} characters`);
  let url: URL;
  try {
    url = new URL(value ?? '');
  } catch {
    throw new InvalidInputError('Invalid url');
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '') throw new InvalidInputError('Invalid url');
  if (url.username !== '' || url.password !== '') throw new InvalidInputError('The URL contains credentials: use authorization_header');
  return url.href;
}

function checkedContentType(value: string | undefined): string {
  if (value !== 'json' && value !== 'form') throw new InvalidInputError('Invalid content type');
  return value;
}

/**
 * POST (the default), or GET for the forgejo and gitea formats, which then carry the payload in the query
 * string as Forgejo sends it; the gogs format is POST only. PUT is Forgejo's for Matrix hooks alone.
 */
function checkedMethod(value: string | undefined, type: string): string {
  const method = (value ?? '').toUpperCase();
  if (method === '' || method === 'POST') return 'POST';
  if (method === 'GET' && type !== 'gogs') return 'GET';
  throw new InvalidInputError(`Invalid http method: ${value}`);
}

function checkedBranchFilter(value: string): string {
  if (!isValidBranchFilter(value)) throw new InvalidInputError('[BranchFilter]: GlobPattern');
  return value;
}

function chosenEvents(events: string[] | undefined): string {
  const chosen = (events ?? []).filter((event) => KNOWN_EVENTS.has(event));
  return [...new Set(chosen.length > 0 || (events ?? []).length > 0 ? chosen : ['push'])].join(',');
}

/** A hook in the audit log by its place and id. */
function hookTarget(hook: WebhookEntity, place: HookPlace) {
  // A user's or the system's hooks are named by their kind ('user', 'system').
  const where = place.kind === 'repository' ? `${place.target.owner.name}/${place.target.repo.name}` : place.kind === 'organization' ? place.org : place.kind;
  return { type: 'hook' as const, id: hook.id, name: `${where}#${hook.id}` };
}

/** The host the hook calls and whether it is active: the URL's path and query may carry a secret of the receiver. */
function hookFacts(hook: WebhookEntity) {
  let host = '';
  try {
    host = new URL(hook.url).host;
  } catch {
    host = '';
  }
  return { host, active: hook.isActive, events: hook.events };
}
