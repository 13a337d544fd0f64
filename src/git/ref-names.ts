/**
 * `git check-ref-format --branch` semantics, without spawning git: whether `name` may be the branch part of
 * `refs/heads/<name>` (a bad default branch is `[DefaultBranch]: GitRefName`).
 */
export function isValidBranchName(name: string): boolean {
  if (name === '' || name === 'HEAD' || name.startsWith('-')) return false;
  return isValidRefName(`refs/heads/${name}`);
}

/** The rules of git-check-ref-format(1) for a full reference name. */
export function isValidRefName(ref: string): boolean {
  if (ref === '@' || ref.startsWith('/') || ref.endsWith('/') || ref.endsWith('.')) return false;
  if (ref.includes('//') || ref.includes('..') || ref.includes('@{')) return false;
  // Control characters, DEL, space and the characters git reserves for revision syntax and globbing.
  if (/[\x00-\x20\x7f~^:?*[\\]/.test(ref)) return false;
  return ref.split('/').every((component) => component !== '' && !component.startsWith('.') && !component.endsWith('.lock'));
}
