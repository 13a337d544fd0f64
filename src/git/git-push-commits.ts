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
    const out = await this.git.run(['log', '-z', '--no-renames', '--name-status', `--format=${format}`, `-n${limit}`, range, '--'], { gitDir: dir });
    const commits = out
      .split(RECORD)
      .filter((record) => record.trim() !== '')
      .map(parseRecord);
    let total = commits.length;
    if (range !== after && commits.length >= limit) {
      total = Number((await this.git.run(['rev-list', '--count', range, '--'], { gitDir: dir })).trim()) || commits.length;
    }
    return { commits, total };
  }
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
