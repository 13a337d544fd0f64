import { BranchProtections } from '../access/branch-protection-policy';
import { assertMayWriteBranch } from '../access/pull-rules';
import { GitChanges } from '../git/git-changes';
import type { RepositoryTarget } from '../access/repository-policy';
import { Inject, Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { ConflictError, InvalidInputError, NotFoundError } from '../common/errors';
import { faultPoint } from '../common/fault-points';
import { Clock } from '../common/time';
import type { TreeEntry } from '../git/git-trees';
import { GitIdentity, GitWrites, RefChangedError, TreeChange } from '../git/git-writes';
import { isValidBranchName } from '../git/ref-names';
import { QUOTA_GATE, QuotaGate, QuotaReservation } from '../quota/quota-gate';
import { gitSignature } from '../repos/git-signature';
import type { ChangeFilesOption, CreateFileOption, DeleteFileOption, FileOptions, IdentityWire, UpdateFileOption } from './content.options';
import type { RefUpdate } from '../git/push-hooks';
import { ContentRepositories, ContentRepository, zeroIdLike } from './content-repository';
import { assertFilePath } from './content-paths';
import { ContentsService } from './contents.service';
import { NamedRef, NOT_SIGNED, toFileCommitWire } from './content.mapper';
import type { FileDeleteResponseWire, FileResponseWire, FilesResponseWire } from './content.wire';
import { SiteUrls } from '../common/site-urls';
import { GitReads } from '../git/git-reads';

/** One file operation of a write, as Forgejo's ChangeRepoFiles takes them. */
interface FileOperation {
  operation: 'create' | 'update' | 'delete';
  path: string;
  content?: Buffer;
  sha?: string;
  fromPath?: string;
}

interface WriteResult {
  ref: NamedRef;
  /** The branch's move, for the push's records and events. */
  update: RefUpdate;
  files: (import('./content.wire').ContentsWire | null)[];
  commit: FileResponseWire['commit'];
}

/** The contents API's check goes by the written paths; git is not asked. */
const NO_GIT_FACTS = { deletion: false, isForcePush: async () => false, firstChangedPath: async () => null };

const BASE64 = /^[A-Za-z0-9+/\r\n]*={0,2}[\r\n]*$/;

function decodeContent(content: string | undefined, path: string): Buffer {
  const text = content ?? '';
  if (!BASE64.test(text)) throw new InvalidInputError(`invalid base64 content [path: ${path}]`);
  return Buffer.from(text, 'base64');
}

function identity(option: IdentityWire | undefined): { name: string; email: string } | null {
  if (!option || typeof option !== 'object') return null;
  const name = typeof option.name === 'string' ? option.name.replace(/[<>\n\r\0]/g, '').trim() : '';
  const email = typeof option.email === 'string' ? option.email.replace(/[<>\n\r\0]/g, '').trim() : '';
  return name !== '' && email !== '' ? { name, email } : null;
}

function dateOf(value: unknown, field: string, fallback: number): number {
  if (value === undefined || value === null || value === '') return fallback;
  const parsed = typeof value === 'string' ? Date.parse(value) : NaN;
  if (Number.isNaN(parsed)) throw new InvalidInputError(`[Dates.${field}]: invalid date`);
  return Math.floor(parsed / 1000);
}

/**
 * Commits made through the API (as Forgejo's file-change API makes them): one commit built with
 * plumbing from the branch head, every blob sha checked against the tree it replaces (409 on a stale sha), the
 * branch moved with compare-and-swap (a concurrent push or write makes this one 409), quota `size:repos:all`
 * on the owner first (413, nothing written), then the repository's size and update time as after a push.
 */
@Injectable()
export class FileWritesService {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly repositories: ContentRepositories,
    private readonly reads: GitReads,
    private readonly writes: GitWrites,
    private readonly contents: ContentsService,
    private readonly clock: Clock,
    @Inject(QUOTA_GATE) private readonly quota: QuotaGate,
    private readonly protections: BranchProtections,
    private readonly changes: GitChanges,
  ) {}

  async create(repository: RepositoryTarget, path: string, body: CreateFileOption): Promise<FileResponseWire> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    const file = assertFilePath(path);
    const result = await this.write(viewer, target, body, [{ operation: 'create', path: file, content: decodeContent(body.content, file) }], `Add ${file}`);
    return { content: result.files[0], commit: result.commit, verification: NOT_SIGNED };
  }

  async update(repository: RepositoryTarget, path: string, body: UpdateFileOption): Promise<FileResponseWire> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    // An empty repository has no file to update: Forgejo answers 422 once the body is read.
    if (target.repo.isEmpty) throw new InvalidInputError('repo is empty');
    const file = assertFilePath(path);
    const fromPath = body.from_path ? assertFilePath(body.from_path) : undefined;
    const operation: FileOperation = { operation: 'update', path: file, content: decodeContent(body.content, file), sha: body.sha, fromPath };
    const result = await this.write(viewer, target, body, [operation], `Update ${file}`);
    return { content: result.files[0], commit: result.commit, verification: NOT_SIGNED };
  }

  async delete(repository: RepositoryTarget, path: string, body: DeleteFileOption): Promise<FileDeleteResponseWire> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    const file = assertFilePath(path);
    const result = await this.write(viewer, target, body, [{ operation: 'delete', path: file, sha: body.sha }], `Delete ${file}`);
    return { content: null, commit: result.commit, verification: NOT_SIGNED };
  }

  async change(repository: RepositoryTarget, body: ChangeFilesOption): Promise<FilesResponseWire> {
    const target = this.repositories.open(repository);
    const viewer = repository.viewer;
    if (!Array.isArray(body.files) || body.files.length === 0) throw new InvalidInputError('[Files]: Required');
    const operations = body.files.map((file, index): FileOperation => {
      if (typeof file !== 'object' || file === null) throw new InvalidInputError(`[Files][${index}]: must be an object`);
      if (!['create', 'update', 'delete'].includes(file.operation)) throw new InvalidInputError(`[Files][${index}].Operation: In`);
      if (typeof file.path !== 'string') throw new InvalidInputError(`[Files][${index}].Path: Required`);
      const path = assertFilePath(file.path);
      return {
        operation: file.operation as FileOperation['operation'],
        path,
        content: file.operation === 'delete' ? undefined : decodeContent(file.content, path),
        sha: typeof file.sha === 'string' ? file.sha : undefined,
        fromPath: typeof file.from_path === 'string' && file.from_path !== '' ? assertFilePath(file.from_path) : undefined,
      };
    });
    const verbs = { create: 'Add', update: 'Update', delete: 'Delete' };
    const message = operations.map((operation) => `${verbs[operation.operation]} ${operation.path}`).join('\n');
    const result = await this.write(viewer, target, body, operations, message);
    return { files: result.files, commit: result.commit, verification: NOT_SIGNED };
  }

  private async write(
    viewer: AuthContext,
    target: ContentRepository,
    option: FileOptions,
    operations: FileOperation[],
    defaultMessage: string,
  ): Promise<WriteResult> {
    const branch = option.branch || target.repo.defaultBranch;
    const newBranch = option.new_branch || undefined;
    if (!isValidBranchName(branch) || (newBranch !== undefined && !isValidBranchName(newBranch))) throw new InvalidInputError('[BranchName]: GitRefName');
    // The door let in the code's writers and the maintainers of pull requests from here; the branch decides now.
    await assertMayWriteBranch(target.target, branch, newBranch);
    const paths = new Set<string>();
    for (const operation of operations) {
      if (paths.has(operation.path)) throw new InvalidInputError(`the same path is changed twice [path: ${operation.path}]`);
      paths.add(operation.path);
      if (operation.operation !== 'create' && !operation.sha) throw new InvalidInputError('[SHA]: Required');
    }
    // A write to an existing branch is judged by the paths it writes; one to a new branch as the push creating it.
    if (newBranch === undefined) {
      await this.protections.assertAllowed(target.repo.id, {
        door: 'contents',
        branch,
        pusher: this.protections.callerPusher(target.target),
        facts: NO_GIT_FACTS,
        paths: [...paths],
      });
    }
    // The written contents are reserved before git is asked to store them, and settled with the recorded size.
    const bytes = operations.reduce((sum, operation) => sum + (operation.content?.length ?? 0), 0);
    const reservation = await this.quota.reserve(
      { id: target.owner.id, name: target.owner.name },
      'size:repos:all',
      target.repo.isPrivate ? 'reposPrivate' : 'reposPublic',
      bytes,
    );
    try {
      return await this.writeReserved(viewer, target, option, operations, defaultMessage, branch, newBranch, reservation);
    } finally {
      await reservation.release();
    }
  }

  private async writeReserved(
    viewer: AuthContext,
    target: ContentRepository,
    option: FileOptions,
    operations: FileOperation[],
    defaultMessage: string,
    branch: string,
    newBranch: string | undefined,
    reservation: QuotaReservation,
  ): Promise<WriteResult> {
    const now = this.clock.nowUnix();
    const { author, committer } = this.identities(viewer, option, now);
    let message = option.message?.trim() ? option.message : defaultMessage;
    if (option.signoff) message = `${message.replace(/\n+$/, '')}\n\nSigned-off-by: ${committer.name} <${committer.email}>`;
    const written = newBranch ?? branch;
    const result = await this.repositories.withGit(async () => {
      const parent = await this.reads.refs.resolveCommit(target.dir, `refs/heads/${branch}`);
      // Only an empty repository may get its first branch from a file write.
      if (!parent && !target.repo.isEmpty) throw new NotFoundError(`branch does not exist [name: ${branch}]`);
      if (newBranch !== undefined && (await this.reads.refs.resolveCommit(target.dir, `refs/heads/${newBranch}`))) {
        throw new InvalidInputError(`branch already exists [name: ${newBranch}]`);
      }
      const changes = parent ? await this.plan(target, parent, operations) : this.planFirst(operations);
      const oid = await this.writes.commit(target.dir, { parent, changes, message, author, committer });
      if (newBranch !== undefined) {
        const facts = this.changes.reading(target.dir, zeroIdLike(oid), oid);
        await this.protections.assertAllowed(target.repo.id, { door: 'git', branch: newBranch, pusher: this.protections.callerPusher(target.target), facts });
      }
      try {
        await this.writes.updateRef(target.dir, `refs/heads/${written}`, oid, newBranch !== undefined ? null : parent);
      } catch (error) {
        if (error instanceof RefChangedError) throw new ConflictError(`branch ${written} was changed by another writer; read it again and retry`);
        throw error;
      }
      faultPoint('contents.ref-updated');
      const ref: NamedRef = { name: written, kind: 'branch', commit: oid };
      const commits = await this.reads.commits.commits(target.dir, [oid]);
      const described = await this.contents.describeFiles(
        target,
        ref,
        operations.filter((op) => op.operation !== 'delete').map((op) => op.path),
      );
      return {
        ref,
        update: { ref: `refs/heads/${written}`, oldId: newBranch === undefined && parent ? parent : zeroIdLike(oid), newId: oid },
        files: operations.map((op) => (op.operation === 'delete' ? null : (described.get(op.path) ?? null))),
        commit: toFileCommitWire(target.urls, commits.get(oid)!),
      };
    });
    await this.repositories.recordRefChanges(viewer, target, [result.update], reservation);
    return result;
  }

  /** Forgejo's rule: given author and committer as given; only one given → both; none → the caller. */
  private identities(viewer: AuthContext, option: FileOptions, now: number): { author: GitIdentity; committer: GitIdentity } {
    const caller = gitSignature(viewer.user!, this.siteUrls, now);
    const givenAuthor = identity(option.author);
    const givenCommitter = identity(option.committer);
    const author = givenAuthor ?? givenCommitter ?? caller;
    const committer = givenCommitter ?? givenAuthor ?? caller;
    const dates = (option.dates ?? {}) as Record<string, unknown>;
    return {
      author: { name: author.name, email: author.email, whenUnix: dateOf(dates.author, 'Author', now) },
      committer: { name: committer.name, email: committer.email, whenUnix: dateOf(dates.committer, 'Committer', now) },
    };
  }

  private planFirst(operations: FileOperation[]): TreeChange[] {
    return operations.map((operation) => {
      if (operation.operation !== 'create') throw new NotFoundError(`repository file does not exist [path: ${operation.path}]`);
      return { path: operation.path, content: operation.content! };
    });
  }

  /**
   * Checks every operation against the parent tree, in one `ls-tree` of the paths and their parent
   * directories: create needs a free path whose parents are not files (422), update and delete need the file
   * (404) with the given sha (409).
   */
  private async plan(target: ContentRepository, parent: string, operations: FileOperation[]): Promise<TreeChange[]> {
    const wanted = new Set<string>();
    for (const operation of operations) {
      for (const path of [operation.path, operation.fromPath].filter((item): item is string => item !== undefined)) {
        const segments = path.split('/');
        for (let count = 1; count <= segments.length; count++) wanted.add(segments.slice(0, count).join('/'));
      }
    }
    const entries = await this.reads.trees.entries(target.dir, parent, [...wanted]);
    const changes: TreeChange[] = [];
    for (const operation of operations) {
      const existing = entries.get(operation.path);
      const source = operation.fromPath ?? operation.path;
      const sourceEntry = entries.get(source);
      if (operation.operation === 'create' || (operation.fromPath && operation.fromPath !== operation.path)) {
        if (existing) throw new InvalidInputError(`repository file already exists [path: ${operation.path}]`);
        assertParentsAreDirectories(entries, operation.path);
      }
      if (operation.operation !== 'create') {
        if (!sourceEntry || sourceEntry.type !== 'blob') throw new NotFoundError(`repository file does not exist [path: ${source}]`);
        if (sourceEntry.oid !== operation.sha) {
          throw new ConflictError(`sha does not match [given: ${operation.sha}, expected: ${sourceEntry.oid}]`);
        }
      }
      if (operation.operation === 'delete') {
        changes.push({ path: operation.path, remove: true });
        continue;
      }
      if (operation.fromPath && operation.fromPath !== operation.path) changes.push({ path: operation.fromPath, remove: true });
      const executable = sourceEntry?.mode === '100755';
      changes.push({ path: operation.path, content: operation.content!, executable });
    }
    return changes;
  }
}

function assertParentsAreDirectories(entries: Map<string, TreeEntry>, path: string): void {
  const segments = path.split('/');
  for (let count = 1; count < segments.length; count++) {
    const parent = entries.get(segments.slice(0, count).join('/'));
    if (parent && parent.type !== 'tree') {
      throw new InvalidInputError(`a file exists where you're trying to create a subdirectory [path: ${parent.path}]`);
    }
  }
}
