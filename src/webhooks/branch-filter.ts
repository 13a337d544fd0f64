/**
 * `branch_filter`: a glob over the whole branch name, where `*` and `?` also match `/`, `{a,b}` is either
 * alternative and `[…]` a character class (the matcher Forgejo's hooks use has no path separators). Empty and
 * `*` match every branch.
 */
export function compileBranchFilter(filter: string): RegExp | null {
  if (filter === '' || filter === '*') return null;
  let pattern = '';
  let depth = 0;
  for (let index = 0; index < filter.length; index++) {
    const char = filter[index];
    if (char === '\\' && index + 1 < filter.length) pattern += escape(filter[++index]);
    else if (char === '*') pattern += '.*';
    else if (char === '?') pattern += '.';
    else if (char === '{') {
      depth++;
      pattern += '(?:';
    } else if (char === '}' && depth > 0) {
      depth--;
      pattern += ')';
    } else if (char === ',' && depth > 0) pattern += '|';
    else if (char === '[') {
      const end = filter.indexOf(']', index + 2);
      if (end < 0) throw new Error('unclosed character class');
      const body = filter
        .slice(index + 1, end)
        .replace(/^!/, '^')
        .replace(/\\/g, '\\\\');
      pattern += `[${body}]`;
      index = end;
    } else pattern += escape(char);
  }
  if (depth !== 0) throw new Error('unclosed alternative');
  return new RegExp(`^${pattern}$`, 's');
}

export function isValidBranchFilter(filter: string): boolean {
  try {
    compileBranchFilter(filter);
    return true;
  } catch {
    return false;
  }
}

export function branchMatches(filter: string, branch: string): boolean {
  const compiled = compileBranchFilter(filter);
  return compiled === null || compiled.test(branch);
}

function escape(char: string): string {
  return char.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}
