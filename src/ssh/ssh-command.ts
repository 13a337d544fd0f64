import { parse } from 'shell-quote';

export type SshVerb = 'git-upload-pack' | 'git-upload-archive' | 'git-receive-pack' | 'git-lfs-authenticate';

export interface SshCommand {
  verb: SshVerb;
  /** As the client typed them, without one `.git` suffix. */
  owner: string;
  repo: string;
  /** `git-lfs-authenticate`'s operation. */
  lfsOperation?: 'upload' | 'download';
}

const VERBS: readonly string[] = ['git-upload-pack', 'git-upload-archive', 'git-receive-pack', 'git-lfs-authenticate'];

/**
 * Parses an SSH exec command as Forgejo's SSH command handler does (docs/git-transports.md). Returns the command, or the
 * message of the first failing rule.
 */
export function parseSshCommand(command: string): SshCommand | { error: string } {
  let words: string[];
  if (!quotesBalanced(command)) return { error: 'Error parsing arguments' };
  try {
    // Variables are kept literally: nothing here is a shell, so `$X` is just text.
    const parsed = parse(command, (name: string) => `$${name}`);
    if (parsed.some((word) => typeof word !== 'string')) return { error: 'Error parsing arguments' };
    words = parsed as string[];
  } catch {
    return { error: 'Error parsing arguments' };
  }
  if (words.length < 2) return { error: 'Too few arguments' };
  const [verb, rawPath] = words;
  if (!VERBS.includes(verb)) return { error: 'Unknown git command' };
  const repositoryPath = rawPath.startsWith('/') ? rawPath.slice(1) : rawPath;
  const slash = repositoryPath.indexOf('/');
  if (slash < 0) return { error: 'Invalid repository path' };
  const owner = repositoryPath.slice(0, slash);
  const rest = repositoryPath.slice(slash + 1);
  const repo = rest.endsWith('.git') ? rest.slice(0, -'.git'.length) : rest;
  if (!/^[A-Za-z0-9_.-]+$/.test(repo)) return { error: 'Invalid repo name' };
  if (verb === 'git-lfs-authenticate') {
    const operation = words[2];
    if (operation !== 'upload' && operation !== 'download') return { error: 'Unknown LFS verb' };
    return { verb, owner, repo, lfsOperation: operation };
  }
  return { verb: verb as SshVerb, owner, repo };
}

/**
 * False when a quote is left open or the command ends in a lone backslash: shell-quote reads such a command
 * as if it were closed, where a POSIX shell (and Forgejo's parser) refuses it.
 */
export function quotesBalanced(command: string): boolean {
  let quote: "'" | '"' | null = null;
  for (let index = 0; index < command.length; index++) {
    const char = command[index];
    if (quote === "'") {
      if (char === "'") quote = null;
    } else if (char === '\\') {
      if (index + 1 >= command.length) return false;
      index++;
    } else if (quote === '"') {
      if (char === '"') quote = null;
    } else if (char === "'" || char === '"') {
      quote = char;
    }
  }
  return quote === null;
}
