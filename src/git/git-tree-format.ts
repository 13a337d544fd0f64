/** Reading raw tree objects (as `git cat-file` gives them), with no git process and no other module. */

/** A raw tree object's entry: its octal mode as git stores it (`40000` for a tree), name and id. */
export interface RawEntry {
  mode: string;
  name: string;
  oid: string;
}

/**
 * Walks a raw tree object (`<octal mode> <name>\0<binary id>` after one another) until `visit` answers true;
 * the name is handed over as bytes, decoded only by callers that want it.
 */
function walkTree(tree: Buffer, idBytes: number, visit: (mode: string, name: Buffer, oid: () => string) => boolean): void {
  let offset = 0;
  while (offset < tree.length) {
    const space = tree.indexOf(0x20, offset);
    const nul = tree.indexOf(0x00, space + 1);
    if (space < 0 || nul < 0 || nul + 1 + idBytes > tree.length) return;
    const start = nul + 1;
    if (visit(tree.toString('latin1', offset, space), tree.subarray(space + 1, nul), () => tree.toString('hex', start, start + idBytes))) return;
    offset = start + idBytes;
  }
}

/** The entries of a raw tree object, at most `limit` of them. */
export function treeEntries(tree: Buffer, idBytes: number, limit: number): RawEntry[] {
  const entries: RawEntry[] = [];
  walkTree(tree, idBytes, (mode, name, oid) => {
    entries.push({ mode, name: name.toString('utf8'), oid: oid() });
    return entries.length >= limit;
  });
  return entries;
}

/** The entry `name` of a raw tree object, or null. */
export function findInTree(tree: Buffer, name: string, idBytes: number): { mode: string; oid: string } | null {
  const wanted = Buffer.from(name, 'utf8');
  let found: { mode: string; oid: string } | null = null;
  walkTree(tree, idBytes, (mode, entryName, oid) => {
    if (entryName.equals(wanted)) found = { mode, oid: oid() };
    return found !== null;
  });
  return found;
}
