import { MEASURED_ITEMS, MeasuredItem, measuredItemsOf, QuotaSubject, QuotaUsage, subjectAndAncestors, usageOf } from './quota-subjects';

/** A rule as evaluation needs it (docs/quota.md). */
export interface EvaluatedRule {
  limit: number;
  subjects: string[];
}

export interface EvaluatedGroup {
  rules: EvaluatedRule[];
}

/** A rule matches S when it lists S or one of S's ancestors; `none` is never matched (docs/quota.md). */
export function ruleMatches(rule: EvaluatedRule, subject: QuotaSubject): boolean {
  const chain = subjectAndAncestors(subject);
  return rule.subjects.some((listed) => (chain as string[]).includes(listed));
}

/** The rule's usage is the sum over its subjects (overlaps count twice); `-1` is unlimited, usage == limit is over. */
export function ruleAllows(rule: EvaluatedRule, used: QuotaUsage): boolean {
  if (rule.limit === -1) return true;
  let usage = 0;
  for (const listed of rule.subjects) usage += usageOf(listed as QuotaSubject, used);
  return usage < rule.limit;
}

/**
 * The quota rule (docs/quota.md): allowed if and only if some group has a rule matching S and no matching rule of
 * that group refuses. A subject no group covers is refused.
 */
export function isAllowed(groups: EvaluatedGroup[], subject: QuotaSubject, used: QuotaUsage): boolean {
  return groups.some((group) => {
    const matching = group.rules.filter((rule) => ruleMatches(rule, subject));
    return matching.length > 0 && matching.every((rule) => ruleAllows(rule, used));
  });
}

/** The measured items that isAllowed(groups, subject, …) reads: those summed by the matching rules that have a limit. */
export function usageNeededFor(groups: EvaluatedGroup[], subject: QuotaSubject): MeasuredItem[] {
  const needed = new Set<MeasuredItem>();
  for (const group of groups) {
    for (const rule of group.rules) {
      if (rule.limit === -1 || !ruleMatches(rule, subject)) continue;
      for (const listed of rule.subjects) for (const item of measuredItemsOf(listed as QuotaSubject)) needed.add(item);
    }
  }
  return MEASURED_ITEMS.filter((item) => needed.has(item));
}

/**
 * How many more bytes of `subject` the usage `used` leaves: over the groups that allow the subject, the most
 * any of them leaves, a group leaving the least of what its matching limited rules leave (Infinity when none
 * of its matching rules has a limit). 0 when no group allows the subject.
 */
export function remainingFor(groups: EvaluatedGroup[], subject: QuotaSubject, used: QuotaUsage): number {
  let best = 0;
  for (const group of groups) {
    const matching = group.rules.filter((rule) => ruleMatches(rule, subject));
    if (matching.length === 0 || !matching.every((rule) => ruleAllows(rule, used))) continue;
    let left = Infinity;
    for (const rule of matching) {
      if (rule.limit === -1) continue;
      let usage = 0;
      for (const listed of rule.subjects) usage += usageOf(listed as QuotaSubject, used);
      left = Math.min(left, rule.limit - usage);
    }
    best = Math.max(best, left);
  }
  return best;
}
