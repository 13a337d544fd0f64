/** Lines of the diff kept above a commented line (with the line itself), as Forgejo's default. */
export const CODE_COMMENT_LINES = 4;

const HUNK_HEADER = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;
const DIFF_HEAD = 'diff --git ';

function isHeader(line: string, inHunk: boolean): boolean {
  return line.startsWith(DIFF_HEAD) || (!inHunk && (line.startsWith('---') || line.startsWith('+++')));
}

/**
 * Pure: the part of a one-file diff a line comment keeps: the file headers, and the hunk holding `line` (on the
 * old side when `old`) cut to the `lines` lines that end at it, with its header counted anew. '' when no hunk
 * holds the line. Forgejo's cut, so that `diff_hunk` reads the same.
 */
export function cutDiffAroundLine(diff: string, line: number, old: boolean, lines = CODE_COMMENT_LINES): string {
  if (line === 0 || lines === 0) return '';
  const hunk: string[] = [];
  let headerLines = 0;
  let currentLine = 0;
  let otherLine = 0;
  let inHunk = false;
  const rows = diff.split('\n');
  if (rows.length > 0 && rows[rows.length - 1] === '') rows.pop();
  for (const row of rows) {
    if (isHeader(row, inHunk)) {
      if (row.startsWith(DIFF_HEAD)) inHunk = false;
      hunk.push(row);
      headerLines++;
    }
    if (currentLine > line) break;
    if (row.startsWith('@@')) {
      inHunk = true;
      if (hunk.length > headerLines) break;
      const match = HUNK_HEADER.exec(row);
      if (!match) continue;
      const [beginOld, lengthOld, beginNew, lengthNew] = [match[1], match[2], match[3], match[4]];
      let begin: number;
      let end: number;
      if (old) {
        begin = Number(beginOld);
        end = Number(lengthOld ?? 0);
        otherLine = Number(beginNew);
      } else {
        begin = Number(beginNew);
        end = lengthNew !== undefined ? Number(lengthNew) : 0;
        otherLine = Number(beginOld);
      }
      end += begin;
      if (begin <= line && end >= line) {
        hunk.push(row);
        currentLine = begin;
        continue;
      }
    } else if (hunk.length > headerLines) {
      hunk.push(row);
      switch (row[0]) {
        case '+':
          if (!old) currentLine++;
          else otherLine++;
          break;
        case '-':
          if (old) currentLine++;
          else otherLine++;
          break;
        case '\\':
          break;
        default:
          currentLine++;
          otherLine++;
      }
    }
  }
  if (currentLine === 0) return '';
  if (hunk.length - headerLines - 1 <= lines) return hunk.join('\n');
  let oldBegin = old ? currentLine : otherLine;
  let newBegin = old ? otherLine : currentLine;
  let oldCount = 0;
  let newCount = 0;
  const kept = [...hunk.slice(0, headerLines), '', ...hunk.slice(hunk.length - lines)];
  for (let index = hunk.length - 1; index >= hunk.length - lines; index--) {
    switch (hunk[index][0]) {
      case '+':
        newBegin--;
        newCount++;
        break;
      case '-':
        oldBegin--;
        oldCount++;
        break;
      default:
        oldBegin--;
        newBegin--;
        newCount++;
        oldCount++;
    }
  }
  kept[headerLines] = `@@ -${oldBegin},${oldCount} +${newBegin},${newCount} @@`;
  return kept.join('\n');
}
