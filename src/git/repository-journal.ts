import { randomBytes } from 'node:crypto';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { Injectable } from '@nestjs/common';
import { taggedName } from '../common/process-identity';
import { RepositoryPaths } from './repository-paths';

/**
 * A change of a repository's row and directory in flight: a creation moves a directory built aside to `to`
 * inside the row's transaction; a deletion removes the directory `to` after the row's commit; a rename moves
 * `from` to `to` before the row changes name.
 */
export type JournalEntry = { kind: 'create' | 'delete'; to: string } | { kind: 'rename'; repoId: number; from: string; to: string };

/** An entry on disk, as found after a crash (paths absolute). */
export type JournalledChange = JournalEntry & { file: string };

/**
 * The journal of repository directory moves: an entry is written (and synced) before the directory moves and
 * removed once the row and the directory agree again (committed, or undone). An entry found at start-up is a
 * change a crash cut off between the two: the start-up reconciliation looks at these few instead of walking
 * every repository; it completes a rename whose row has the new name, moves the directory back when the row
 * has the old one, and quarantines the directory of a creation whose row never committed or of a deletion whose
 * row did.
 */
@Injectable()
export class RepositoryJournal {
  constructor(private readonly paths: RepositoryPaths) {}

  /** Records `entry`; the answer removes it (call it once the row and the directory agree again). */
  async begin(entry: JournalEntry): Promise<() => Promise<void>> {
    const dir = this.paths.journal();
    const root = path.dirname(dir);
    await fs.mkdir(dir, { recursive: true, mode: 0o700 });
    const file = path.join(dir, taggedName(`${entry.kind}-${randomBytes(8).toString('hex')}.json`));
    const body =
      entry.kind === 'rename'
        ? { kind: 'rename', repoId: entry.repoId, from: path.relative(root, entry.from), to: path.relative(root, entry.to) }
        : { kind: entry.kind, to: path.relative(root, entry.to) };
    // Written aside and renamed into place, so that an entry is never read half-written.
    const partial = `${file}.partial`;
    const handle = await fs.open(partial, 'w', 0o600);
    try {
      await handle.writeFile(JSON.stringify(body));
      await handle.sync();
    } finally {
      await handle.close();
    }
    await fs.rename(partial, file);
    return () => fs.rm(file, { force: true });
  }

  /** Every complete entry (a `.partial` file is one being written, or a change that never began). */
  async pending(): Promise<JournalledChange[]> {
    const dir = this.paths.journal();
    const root = path.dirname(dir);
    const entries: JournalledChange[] = [];
    for (const name of await fs.readdir(dir).catch(() => [] as string[])) {
      if (!name.endsWith('.json')) continue;
      const file = path.join(dir, name);
      try {
        const body = JSON.parse(await fs.readFile(file, 'utf8')) as { kind: string; repoId?: number; from?: string; to: string };
        const to = path.resolve(root, body.to);
        if (body.kind === 'rename') entries.push({ kind: 'rename', repoId: Number(body.repoId), from: path.resolve(root, body.from!), to, file });
        else if (body.kind === 'create' || body.kind === 'delete') entries.push({ kind: body.kind, to, file });
      } catch {
        // Removed meanwhile by the change that wrote it.
      }
    }
    return entries;
  }

  /** Whether `entry` is still in the journal (its change may have finished meanwhile). */
  async holds(entry: JournalledChange): Promise<boolean> {
    return (await fs.lstat(entry.file).catch(() => null)) !== null;
  }
}
