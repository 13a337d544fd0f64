import type { MergeStyle } from '../git/merge-errors';

/** What the default message of a merge is made from. */
export interface MergeMessageFacts {
  title: string;
  index: number;
  headBranch: string;
  baseBranch: string;
  /** `owner/name` of the head repository when it is not the base repository; null when it was deleted. */
  headRepository?: string | null;
  /** The base repository uses an external tracker: pull requests are then referred to as `!N`. */
  externalTracker?: boolean;
}

/**
 * The title Forgejo gives a merge when the caller gives none (`MergeTitleField` empty): the squashed commit is
 * the pull request's title and reference, every commit-making style merges "pull request 'X' (#N) from H into B";
 * a rebase makes no commit of its own and has none.
 */
export function defaultMergeTitle(style: MergeStyle, facts: MergeMessageFacts): string {
  const reference = `${facts.externalTracker ? '!' : '#'}${facts.index}`;
  if (style === 'rebase' || style === 'fast-forward-only') return '';
  if (style === 'squash') return `${facts.title} (${reference})`;
  const from =
    facts.headRepository === undefined
      ? facts.headBranch
      : facts.headRepository === null
        ? `<deleted>:${facts.headBranch}`
        : `${facts.headRepository}:${facts.headBranch}`;
  return `Merge pull request '${facts.title}' (${reference}) from ${from} into ${facts.baseBranch}`;
}

/** The message of the merge route: the title given (else the default), then a blank line and the body given. */
export function mergeMessage(style: MergeStyle, facts: MergeMessageFacts, titleField: string | undefined, messageField: string | undefined): string {
  let message = (titleField ?? '').trim();
  if (message === '') message = defaultMergeTitle(style, facts);
  const body = (messageField ?? '').trim();
  if (body !== '') message += `\n\n${body}`;
  return message;
}

/**
 * The squashed commit's message: when its author (the poster) is not its committer (the merger), Forgejo ends
 * it with trailers crediting the author, each `Name <address>`.
 */
export function squashMessage(message: string, author: { name: string; email: string }, committer: { name: string; email: string }): string {
  const signature = (who: { name: string; email: string }) => `${who.name} <${who.email}>`;
  if (signature(author) === signature(committer)) return message;
  return `${message}\nCo-authored-by: ${signature(author)}\nCo-committed-by: ${signature(author)}\n`;
}
