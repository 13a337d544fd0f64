import { Injectable } from '@nestjs/common';
import { GitCommand } from './git-command';
import { isValidRefName } from './ref-names';

/** Tags of a bare repository, for releases (and anything else that needs to read or make one). */
@Injectable()
export class GitTags {
  constructor(private readonly git: GitCommand) {}

  /** The commit a tag points at (peeled), or null when there is no such tag. */
  async commitOf(dir: string, tag: string): Promise<string | null> {
    return this.resolveCommit(dir, `refs/tags/${tag}`);
  }

  /** The commit a branch, tag or commit id names, or null when it names none. */
  async resolveCommit(dir: string, commitish: string): Promise<string | null> {
    if (commitish === '' || commitish.startsWith('-')) return null;
    const result = await this.git.probe(['rev-parse', '--verify', '--quiet', '--end-of-options', `${commitish}^{commit}`], { gitDir: dir });
    return result.exitCode === 0 ? result.stdout.trim() : null;
  }

  /**
   * Creates the lightweight tag `name` at `commit`. False when the tag already exists (update-ref with an
   * empty old value refuses to overwrite, so two concurrent creations cannot both win).
   */
  async create(dir: string, name: string, commit: string): Promise<boolean> {
    if (!isValidTagName(name)) throw new Error(`invalid tag name: ${JSON.stringify(name)}`);
    const result = await this.git.probe(['update-ref', `refs/tags/${name}`, commit, ''], { gitDir: dir });
    return result.exitCode === 0;
  }
}

/** A tag name git accepts under refs/tags/ (check-ref-format rules). */
export function isValidTagName(name: string): boolean {
  return name !== '' && !name.startsWith('-') && isValidRefName(`refs/tags/${name}`);
}
