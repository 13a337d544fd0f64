import { StringDecoder } from 'node:string_decoder';
import { Injectable } from '@nestjs/common';
import { GitCommand } from './git-command';

const EMPTY_TREE_SHA1 = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const EMPTY_TREE_SHA256 = '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321';

const isZero = (id: string) => /^0+$/.test(id);

/** What git says of one branch update `oldId → newId` (ids of the same format; all-zero for none). */
export interface BranchUpdateReading {
  deletion: boolean;
  isForcePush(): Promise<boolean>;
  firstChangedPath(test: (path: string) => boolean): Promise<string | null>;
}

/**
 * The git facts branch protection judges an update by, each read only when asked: `rev-list --max-count=1
 * <old> ^<new>` (any commit left behind makes a force push) and `diff-tree -r --name-only -z --no-renames
 * <old or the empty tree> <new>`, streamed and stopped at the first path the caller looks for, so a push of
 * a hundred thousand changed paths is read a chunk at a time, never held whole. `env` carries git's
 * quarantine variables during pre-receive, when the pushed objects are not in the repository yet.
 */
@Injectable()
export class GitChanges {
  constructor(private readonly git: GitCommand) {}

  reading(dir: string, oldId: string, newId: string, env: Record<string, string> = {}): BranchUpdateReading {
    let forcePush: Promise<boolean> | undefined;
    return {
      deletion: isZero(newId),
      isForcePush: () => (forcePush ??= this.isForcePush(dir, oldId, newId, env)),
      firstChangedPath: (test) => this.firstChangedPath(dir, oldId, newId, env, test),
    };
  }

  async isForcePush(dir: string, oldId: string, newId: string, env: Record<string, string> = {}): Promise<boolean> {
    if (isZero(oldId) || isZero(newId)) return false;
    const output = await this.git.run(['rev-list', '--max-count=1', oldId, `^${newId}`], { gitDir: dir, env });
    return output.trim() !== '';
  }

  /** The first path changed between `oldId` and `newId` for which `test` holds, or null once all were read. */
  async firstChangedPath(dir: string, oldId: string, newId: string, env: Record<string, string>, test: (path: string) => boolean): Promise<string | null> {
    if (isZero(newId)) return null;
    const from = isZero(oldId) ? (newId.length === 64 ? EMPTY_TREE_SHA256 : EMPTY_TREE_SHA1) : oldId;
    const stream = this.git.stream(['diff-tree', '-r', '--name-only', '-z', '--no-renames', '--no-commit-id', from, newId], { gitDir: dir, env });
    const decoder = new StringDecoder('utf8');
    let rest = '';
    let found: string | null = null;
    try {
      for await (const chunk of stream.stdout as AsyncIterable<Buffer>) {
        const parts = (rest + decoder.write(chunk)).split('\0');
        rest = parts.pop() ?? '';
        for (const path of parts) {
          if (path !== '' && test(path)) {
            found = path;
            break;
          }
        }
        if (found !== null) break;
      }
      rest += decoder.end();
      if (found === null && rest !== '' && test(rest)) found = rest;
    } finally {
      if (found !== null) stream.kill();
    }
    if (found === null) await stream.exited;
    return found;
  }
}
