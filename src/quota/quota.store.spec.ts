import { groupsFromRows, RawGroupRule } from './quota.store';

const row = (groupId: number, linkId: number | null, ruleId: number | null): RawGroupRule => ({
  group_id: String(groupId),
  group_name: `g${groupId}`,
  link_id: linkId,
  rule_id: ruleId,
  rule_name: ruleId === null ? null : `r${ruleId}`,
  rule_limit: ruleId === null ? null : String(ruleId * 10),
  rule_subjects: ruleId === null ? null : '["size:all"]',
});

describe('groupsFromRows', () => {
  it('orders groups by id and their rules by link, whatever order the database returned the rows in', () => {
    const groups = groupsFromRows([row(7, 30, 1), row(2, null, null), row(7, 12, 9), row(5, 4, 3), row(7, 21, 2)]);
    expect(groups.map((group) => [group.id, group.rules.map((rule) => rule.id)])).toEqual([
      [2, []],
      [5, [3]],
      [7, [9, 2, 1]],
    ]);
    expect(groups[1]).toEqual({ id: 5, name: 'g5', rules: [{ id: 3, name: 'r3', limit: 30, subjects: ['size:all'] }] });
  });

  it('has no groups for no rows', () => {
    expect(groupsFromRows([])).toEqual([]);
  });
});
