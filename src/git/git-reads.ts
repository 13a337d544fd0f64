import { Injectable } from '@nestjs/common';
import { GitCommits } from './git-commits';
import { GitData } from './git-data';
import { GitLastCommits } from './git-last-commits';
import { GitObjects } from './git-objects';
import { GitRefs } from './git-refs';
import { GitTrees } from './git-trees';

/**
 * The one door through which the content module reads a repository. Behind it the readers are split by what they
 * read: refs, commits and trees by command (a git process each, inside a slot the caller holds); objects through
 * the long-lived batch readers, with what they determine remembered (no slot held); the Git Data API's raw
 * objects; and the last commit of each path.
 */
@Injectable()
export class GitReads {
  constructor(
    readonly refs: GitRefs,
    readonly commits: GitCommits,
    readonly trees: GitTrees,
    readonly objects: GitObjects,
    readonly lastCommits: GitLastCommits,
    readonly data: GitData,
  ) {}
}
