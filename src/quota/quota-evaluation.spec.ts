import fc from 'fast-check';
import { isAllowed, remainingFor, ruleAllows, ruleMatches, usageNeededFor } from './quota-evaluation';
import { isQuotaSubject, MeasuredItem, NO_USAGE, QUOTA_SUBJECTS, QuotaUsage, subjectAndAncestors, usageOf } from './quota-subjects';

const used = { ...NO_USAGE, reposPublic: 100, reposPrivate: 50, packages: 7 };

describe('quota subjects', () => {
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

describe('quota rules and groups', () => {
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
    const strict = {
      rules: [
        { limit: -1, subjects: ['size:all'] },
        { limit: 10, subjects: ['size:repos:all'] },
      ],
    };
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

describe('usage a check needs', () => {
  it('reads nothing when the matching rules are unlimited or none matches, and only what a limited rule sums', () => {
    expect(usageNeededFor([{ rules: [{ limit: -1, subjects: ['size:all'] }] }], 'size:repos:all')).toEqual([]);
    expect(usageNeededFor([{ rules: [{ limit: 5, subjects: ['size:git:lfs'] }] }], 'size:repos:all')).toEqual([]);
    expect(usageNeededFor([{ rules: [{ limit: 5, subjects: ['size:repos:all'] }] }], 'size:repos:public')).toEqual(['repos']);
    expect(usageNeededFor([{ rules: [{ limit: 5, subjects: ['size:all'] }] }], 'size:assets:packages:all')).toEqual([
      'repos',
      'lfs',
      'attachmentsReleases',
      'packages',
    ]);
    expect(usageNeededFor([{ rules: [{ limit: 5, subjects: ['size:repos:all', 'size:assets:packages:all'] }] }], 'size:repos:all')).toEqual([
      'repos',
      'packages',
    ]);
  });

  it('gives the same decision as the full usage, for any groups, subject and usage (property)', () => {
    const subject = fc.constantFrom(...QUOTA_SUBJECTS);
    const rule = fc.record({ limit: fc.oneof(fc.constant(-1), fc.constant(0), fc.nat(1000)), subjects: fc.array(subject, { maxLength: 3 }) });
    const groups = fc.array(fc.record({ rules: fc.array(rule, { maxLength: 3 }) }), { maxLength: 3 });
    const bytes = fc.nat(600);
    const usage = fc.record({ reposPublic: bytes, reposPrivate: bytes, lfs: bytes, attachmentsReleases: bytes, packages: bytes });
    fc.assert(
      fc.property(groups, subject, usage, (groupList, checked, measured) => {
        const full: QuotaUsage = { ...NO_USAGE, ...measured };
        const needed = new Set<MeasuredItem>(usageNeededFor(groupList, checked));
        const partial: QuotaUsage = {
          ...NO_USAGE,
          ...(needed.has('repos') ? { reposPublic: measured.reposPublic, reposPrivate: measured.reposPrivate } : {}),
          ...(needed.has('lfs') ? { lfs: measured.lfs } : {}),
          ...(needed.has('attachmentsReleases') ? { attachmentsReleases: measured.attachmentsReleases } : {}),
          ...(needed.has('packages') ? { packages: measured.packages } : {}),
        };
        expect(isAllowed(groupList, checked, partial)).toBe(isAllowed(groupList, checked, full));
      }),
      { numRuns: 2000 },
    );
  });
});

describe('what a usage leaves of a subject (the budget a reservation takes)', () => {
  it('is the least any matching limited rule of an allowing group leaves, the most over allowing groups', () => {
    const used: QuotaUsage = { ...NO_USAGE, reposPublic: 300, packages: 50 };
    expect(remainingFor([{ rules: [{ limit: 1000, subjects: ['size:repos:all'] }] }], 'size:repos:all', used)).toBe(700);
    expect(
      remainingFor(
        [
          {
            rules: [
              { limit: 1000, subjects: ['size:repos:all'] },
              { limit: 400, subjects: ['size:all'] },
            ],
          },
        ],
        'size:repos:all',
        used,
      ),
    ).toBe(50);
    expect(
      remainingFor([{ rules: [{ limit: 400, subjects: ['size:all'] }] }, { rules: [{ limit: 2000, subjects: ['size:git:all'] }] }], 'size:repos:public', used),
    ).toBe(1700);
    expect(remainingFor([{ rules: [{ limit: -1, subjects: ['size:all'] }] }], 'size:repos:all', used)).toBe(Infinity);
    // A group that refuses leaves nothing, whatever another rule of it would leave.
    expect(remainingFor([{ rules: [{ limit: 300, subjects: ['size:repos:all'] }] }], 'size:repos:all', used)).toBe(0);
  });

  it('is positive exactly when the subject is allowed (property)', () => {
    const subject = fc.constantFrom(...QUOTA_SUBJECTS);
    const rule = fc.record({ limit: fc.oneof(fc.constant(-1), fc.constant(0), fc.nat(1000)), subjects: fc.array(subject, { maxLength: 3 }) });
    const groups = fc.array(fc.record({ rules: fc.array(rule, { maxLength: 3 }) }), { maxLength: 3 });
    const bytes = fc.nat(600);
    const usage = fc.record({ reposPublic: bytes, reposPrivate: bytes, attachmentsReleases: bytes, packages: bytes });
    fc.assert(
      fc.property(groups, subject, usage, (groupList, checked, measured) => {
        const used: QuotaUsage = { ...NO_USAGE, ...measured };
        expect(remainingFor(groupList, checked, used) > 0).toBe(isAllowed(groupList, checked, used));
      }),
      { numRuns: 2000 },
    );
  });
});
