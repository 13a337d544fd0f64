import * as fs from 'node:fs';

/**
 * The fields of a Linux /proc/…/stat file after the command name, which is in parentheses and may itself hold
 * spaces and parentheses: index 0 is the state (field 3 of proc(5)), so field N is at index N − 3. Null when the
 * file cannot be read (no such process or thread, not Linux).
 */
export function procStatFields(file: string): string[] | null {
  try {
    const stat = fs.readFileSync(file, 'latin1');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return null;
  }
}
