/**
 * Forgejo's rules for generic packages (routers/api/packages/generic): a name of word characters and
 * `-_+.` (not `.`/`..`, and a single character must be a letter or digit); a file name of word characters,
 * spaces and `-_+=:;.()[]{}~!@#$%^&`, without surrounding spaces; a version without surrounding spaces.
 */
const PACKAGE_NAME = /^[-_+.\p{L}\p{N}_]+$/u;
const FILE_NAME = /^[-_+=:;.()[\]{}~!@#$%^& \p{L}\p{N}_]+$/u;

export function isValidPackageName(name: string): boolean {
  if (name.length > 255 || name === '.' || name === '..') return false;
  if ([...name].length === 1 && !/^[\p{L}\p{N}]$/u.test(name)) return false;
  return PACKAGE_NAME.test(name);
}

export function isValidFileName(name: string): boolean {
  return name.length <= 255 && FILE_NAME.test(name) && name.trim() === name && name !== '.' && name !== '..';
}

export function isValidPackageVersion(version: string): boolean {
  return version !== '' && version.length <= 255 && version.trim() === version && !/[/\\\0]/.test(version);
}
