import { Injectable } from '@nestjs/common';
import type { PushedCommit } from '../events/repository-events';
import { GitCommand } from './git-command';

const RECORD = '\x1e';

/** The commits a ref change brought, for event payloads: newest first, with the files each one touched. */
@Injectable()
export class GitPushCommits {
  constructor(private readonly git: GitCommand) {}

  /**
   * `before..after` when the ref existed, else the last `limit` commits of `after`; the total counts the whole
   * range (for a new ref: what was listed).
   */
  async read(dir: string, before: string, after: string, limit: number): Promise<{ commits: PushedCommit[]; total: number }> {
    const range = /^0+$/.test(before) ? after : `${before}..${after}`;
    const format = `${RECORD}%H%x00%an%x00%ae%x00%cn%x00%ce%x00%ct%x00%B%x00`;
    // Through the launcher: a push waits for this listing, and forking the server for it would stall every request.
    const out = await this.git.run(['log', '-z', '--no-renames', '--name-status', `--format=${format}`, `-n${limit}`, range, '--'], { gitDir: dir, offload: true });
    const commits = out
      .split(RECORD)
      .filter((record) => record.trim() !== '')
      .map(parseRecord);
    let total = commits.length;
    if (range !== after && commits.length >= limit) {
      total = Number((await this.git.run(['rev-list', '--count', range, '--'], { gitDir: dir, offload: true })).trim()) || commits.length;
    }
    return { commits, total };
  }

  /** Branches and tags with the object each holds: compared before and after a fetch, they are its ref changes. */
  async refs(dir: string): Promise<Map<string, string>> {
    const out = await this.git.run(['for-each-ref', '--format=%(objectname) %(refname)', 'refs/heads', 'refs/tags'], { gitDir: dir });
    const refs = new Map<string, string>();
    for (const line of out.split('\n')) {
      const space = line.indexOf(' ');
      if (space > 0) refs.set(line.slice(space + 1), line.slice(0, space));
    }
    return refs;
  }
}

/** What moved between two ref listings, as a push hook would have been told. */
export function diffRefs(before: Map<string, string>, after: Map<string, string>): { ref: string; oldId: string; newId: string }[] {
  const updates: { ref: string; oldId: string; newId: string }[] = [];
  for (const [ref, id] of after) {
    const old = before.get(ref);
    if (old !== id) updates.push({ ref, oldId: old ?? '0'.repeat(id.length), newId: id });
  }
  for (const [ref, id] of before) if (!after.has(ref)) updates.push({ ref, oldId: id, newId: '0'.repeat(id.length) });
  return updates;
}

function parseRecord(record: string): PushedCommit {
  const fields = record.split('\0');
  const [id, authorName, authorEmail, committerName, committerEmail, time, message] = fields;
  const commit: PushedCommit = {
    id,
    message,
    authorName,
    authorEmail,
    committerName,
    committerEmail,
    timestamp: Number(time),
    added: [],
    removed: [],
    modified: [],
  };
  const changes = fields
    .slice(7)
    .map((field) => field.replace(/^\n+/, ''))
    .filter((field) => field !== '');
  for (let index = 0; index + 1 < changes.length; index += 2) {
    const status = changes[index];
    const file = changes[index + 1];
    if (status.startsWith('A')) commit.added.push(file);
    else if (status.startsWith('D')) commit.removed.push(file);
    else commit.modified.push(file);
  }
  return commit;
}
