import type { QuotaUsage } from './quota-subjects';
import type { QuotaGroupWithRules, QuotaRule } from './quota.store';
import type { QuotaGroupWire, QuotaInfoWire, QuotaRuleInfoWire } from './quota.wire';

/** Whether names are shown: the admin views show them, the user and organisation views do not (docs/quota.md). */
export type QuotaView = 'admin' | 'owner';

export function toQuotaRuleInfo(rule: QuotaRule, view: QuotaView): QuotaRuleInfoWire {
  return {
    ...(view === 'admin' ? { name: rule.name } : {}),
    limit: rule.limit,
    ...(rule.subjects.length > 0 ? { subjects: [...rule.subjects] } : {}),
  };
}

export function toQuotaGroup(group: QuotaGroupWithRules, view: QuotaView): QuotaGroupWire {
  return { ...(view === 'admin' ? { name: group.name } : {}), rules: group.rules.map((rule) => toQuotaRuleInfo(rule, view)) };
}

export function toQuotaInfo(used: QuotaUsage, groups: QuotaGroupWithRules[], view: QuotaView): QuotaInfoWire {
  return {
    used: {
      size: {
        repos: { public: used.reposPublic, private: used.reposPrivate },
        git: { LFS: used.lfs },
        assets: {
          attachments: { issues: used.attachmentsIssues, releases: used.attachmentsReleases },
          artifacts: used.artifacts,
          packages: { all: used.packages },
        },
      },
    },
    groups: groups.map((group) => toQuotaGroup(group, view)),
  };
}
