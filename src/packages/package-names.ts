/**
 * Forgejo's rules for generic packages: a name of ASCII word characters (letters, digits, `_`) and `-+.`
 * (not `.`/`..`, and a single character must be a letter or digit); a file name of ASCII word characters,
 * spaces and `-_+=:;.()[]{}~!@#$%^&`, without surrounding spaces; a version without surrounding spaces.
 * Word characters are ASCII only, as in Go's regular expressions: `päckage` is refused.
 */
const PACKAGE_NAME = /^[-_+.A-Za-z0-9]+$/;
const FILE_NAME = /^[-_+=:;.()[\]{}~!@#$%^& A-Za-z0-9]+$/;

export function isValidPackageName(name: string): boolean {
  if (name.length > 255 || name === '.' || name === '..') return false;
  if (name.length === 1 && !/^[A-Za-z0-9]$/.test(name)) return false;
  return PACKAGE_NAME.test(name);
}

export function isValidFileName(name: string): boolean {
  return name.length <= 255 && FILE_NAME.test(name) && name.trim() === name && name !== '.' && name !== '..';
}

export function isValidPackageVersion(version: string): boolean {
  return version !== '' && version.length <= 255 && version.trim() === version && !/[/\\\0]/.test(version);
}
