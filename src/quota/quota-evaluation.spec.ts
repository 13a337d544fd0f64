import { isAllowed, ruleAllows, ruleMatches } from './quota-evaluation';
import { isQuotaSubject, NO_USAGE, QUOTA_SUBJECTS, subjectAndAncestors, usageOf } from './quota-subjects';

const used = { ...NO_USAGE, reposPublic: 100, reposPrivate: 50, packages: 7 };

describe('quota subjects (behaviour 11.1)', () => {
  it('knows exactly the subjects of 11.1, case-sensitively', () => {
    expect(QUOTA_SUBJECTS).toHaveLength(14);
    expect(isQuotaSubject('size:repos:all')).toBe(true);
    expect(isQuotaSubject('SIZE:ALL')).toBe(false);
    expect(isQuotaSubject('size:repos')).toBe(false);
    expect(isQuotaSubject(3)).toBe(false);
  });

  it('puts size:repos:* under size:git:all, and none under nothing', () => {
    expect(subjectAndAncestors('size:repos:private')).toEqual(['size:repos:private', 'size:repos:all', 'size:git:all', 'size:all']);
    expect(subjectAndAncestors('size:assets:attachments:releases')).toEqual([
      'size:assets:attachments:releases',
      'size:assets:attachments:all',
      'size:assets:all',
      'size:all',
    ]);
    expect(subjectAndAncestors('none')).toEqual([]);
  });

  it('measures composite subjects as sums', () => {
    expect(usageOf('size:repos:all', used)).toBe(150);
    expect(usageOf('size:repos:public', used)).toBe(100);
    expect(usageOf('size:git:all', used)).toBe(150);
    expect(usageOf('size:assets:all', used)).toBe(7);
    expect(usageOf('size:all', used)).toBe(157);
    expect(usageOf('size:git:lfs', used)).toBe(0);
    expect(usageOf('none', used)).toBe(0);
  });
});

describe('quota rules and groups (behaviour 11.2-11.5)', () => {
  it('matches a subject through its parents, never none, never with no subjects', () => {
    expect(ruleMatches({ limit: 1, subjects: ['size:all'] }, 'size:repos:public')).toBe(true);
    expect(ruleMatches({ limit: 1, subjects: ['size:git:lfs'] }, 'size:repos:all')).toBe(false);
    expect(ruleMatches({ limit: 1, subjects: ['none', 'size:all'] }, 'none')).toBe(false);
    expect(ruleMatches({ limit: 1, subjects: [] }, 'size:all')).toBe(false);
  });

  it('allows -1, refuses usage equal to the limit, 0, and other negative limits', () => {
    expect(ruleAllows({ limit: -1, subjects: ['size:all'] }, used)).toBe(true);
    expect(ruleAllows({ limit: 151, subjects: ['size:repos:all'] }, used)).toBe(true);
    expect(ruleAllows({ limit: 150, subjects: ['size:repos:all'] }, used)).toBe(false);
    expect(ruleAllows({ limit: 0, subjects: ['size:git:lfs'] }, NO_USAGE)).toBe(false);
    expect(ruleAllows({ limit: -2, subjects: ['size:all'] }, NO_USAGE)).toBe(false);
  });

  it("sums a rule's subjects, counting overlaps twice", () => {
    expect(ruleAllows({ limit: 251, subjects: ['size:repos:all', 'size:repos:public'] }, used)).toBe(true);
    expect(ruleAllows({ limit: 250, subjects: ['size:repos:all', 'size:repos:public'] }, used)).toBe(false);
  });

  it('refuses a subject no group covers, and a group as soon as one matching rule refuses', () => {
    expect(isAllowed([{ rules: [{ limit: -1, subjects: ['size:git:lfs'] }] }], 'size:repos:all', used)).toBe(false);
    expect(isAllowed([], 'size:all', used)).toBe(false);
    const strict = { rules: [{ limit: -1, subjects: ['size:all'] }, { limit: 10, subjects: ['size:repos:all'] }] };
    expect(isAllowed([strict], 'size:repos:all', used)).toBe(false);
    // The second rule does not match an asset subject, so the group allows it.
    expect(isAllowed([strict], 'size:assets:all', used)).toBe(true);
  });

  it('allows when some group matches and allows, even if another refuses', () => {
    const refusing = { rules: [{ limit: 0, subjects: ['size:all'] }] };
    const allowing = { rules: [{ limit: 1000, subjects: ['size:git:all'] }] };
    expect(isAllowed([refusing, allowing], 'size:repos:all', used)).toBe(true);
    expect(isAllowed([refusing, allowing], 'size:assets:packages:all', used)).toBe(false);
  });
});
