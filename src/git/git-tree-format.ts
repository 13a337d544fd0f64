/** Reading raw tree objects, and a commit's parents (as `git cat-file` gives them), with no git process and no other module. */

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

/**
 * How many entries a raw tree object has, and the ids of its subtrees (mode `40000`), in order: what counting a
 * tree's paths needs, without decoding a name or the id of any other entry (most entries are files). The ids
 * come in hex, or as their raw bytes in a one-byte string (`latin1`: no formatting).
 */
export function treeShape(tree: Buffer, idBytes: number, encoding: 'hex' | 'latin1' = 'hex'): { entries: number; subtrees: string[] } {
  const subtrees: string[] = [];
  let entries = 0;
  let offset = 0;
  const end = tree.length;
  while (offset < end) {
    // Byte loops rather than indexOf: a mode and a name are a few bytes, shorter than a native call costs.
    let space = offset;
    while (space < end && tree[space] !== 0x20) space++;
    let nul = space + 1;
    while (nul < end && tree[nul] !== 0x00) nul++;
    if (nul >= end || nul + 1 + idBytes > end) break;
    entries += 1;
    // `40000` (git writes no leading zero): 0x34 then four 0x30.
    if (
      space - offset === 5 &&
      tree[offset] === 0x34 &&
      tree[offset + 1] === 0x30 &&
      tree[offset + 2] === 0x30 &&
      tree[offset + 3] === 0x30 &&
      tree[offset + 4] === 0x30
    ) {
      subtrees.push(tree.toString(encoding, nul + 1, nul + 1 + idBytes));
    }
    offset = nul + 1 + idBytes;
  }
  return { entries, subtrees };
}

/** The parents a raw commit object names (its `parent` header lines). */
export function commitParents(commit: Buffer): string[] {
  const parents: string[] = [];
  for (const line of commit.toString('latin1', 0, Math.max(commit.indexOf('\n\n'), 0)).split('\n')) {
    if (line.startsWith('parent ')) parents.push(line.slice('parent '.length));
  }
  return parents;
}
