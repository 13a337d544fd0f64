import { findIssueReferences } from './issue-references';

const ROOT = 'http://anvil.test/';
const refs = (text: string) => findIssueReferences(text, ROOT).map((r) => `${r.owner}/${r.name}#${r.index}:${r.action}`);

describe('findIssueReferences', () => {
  it('reads #N and owner/repo#N with the keyword just before each', () => {
    expect(refs('Fixes #3, closes Owner/Repo#4 and reopens #5')).toEqual(['/#3:closes', '/#5:reopens', 'owner/repo#4:closes']);
    expect(refs('resolved: #7')).toEqual(['/#7:closes']);
    expect(refs('Refs #1 #2\n\nfixed #9.')).toEqual(['/#1:none', '/#2:none', '/#9:closes']);
  });

  it('needs a keyword right before the reference, as a word of its own', () => {
    expect(refs('fixes the bug in #3')).toEqual(['/#3:none']);
    expect(refs('prefix #3')).toEqual(['/#3:none']);
    expect(refs('unfixes #3')).toEqual(['/#3:none']);
  });

  it('ignores references inside words, bad names and huge numbers', () => {
    expect(refs('a#3 x#y #99999999999999999999 a/b/c#4 (#5)')).toEqual(['/#5:none']);
  });

  it('reads links to issue pages of this site as references', () => {
    expect(refs(`closes ${ROOT}alice/tool/issues/8 and https://elsewhere.test/alice/tool/issues/9`)).toEqual(['alice/tool#8:closes']);
  });
});
