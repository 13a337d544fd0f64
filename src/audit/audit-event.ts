/**
 * What the audit log records. Actions are `<subject>.<verb>`; an action listed here is all a caller needs to
 * record one (AuditService.record inside the transaction of the change).
 */
export const AUDIT_ACTIONS = [
  'sign_in',
  'token.create',
  'token.delete',
  'ssh_key.add',
  'ssh_key.delete',
  'gpg_key.add',
  'gpg_key.delete',
  'deploy_key.add',
  'deploy_key.delete',
  'user.create',
  'user.edit',
  'user.delete',
  'user.register',
  'organization.create',
  'organization.edit',
  'organization.delete',
  'team.create',
  'team.edit',
  'team.delete',
  'team.member_add',
  'team.member_remove',
  'team.repository_add',
  'team.repository_remove',
  'collaborator.add',
  'collaborator.remove',
  'repository.create',
  'repository.delete',
  'repository.rename',
  'repository.transfer',
  'repository.visibility',
  'repository.archive',
  'repository.unarchive',
  'issue.delete',
  'comment.delete',
  'hook.create',
  'hook.edit',
  'hook.delete',
  'quota.rule_create',
  'quota.rule_edit',
  'quota.rule_delete',
  'quota.group_create',
  'quota.group_delete',
  'quota.group_rule_add',
  'quota.group_rule_remove',
  'quota.group_user_add',
  'quota.group_user_remove',
  'oauth2_application.create',
  'oauth2_application.edit',
  'oauth2_application.delete',
  'oauth2_grant.create',
  'oauth2_grant.revoke',
  'cli.dump',
  'cli.restore',
  'cli.doctor',
] as const;

export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export type AuditTargetType =
  | 'user'
  | 'organization'
  | 'team'
  | 'repository'
  | 'token'
  | 'ssh_key'
  | 'gpg_key'
  | 'deploy_key'
  | 'hook'
  | 'issue'
  | 'comment'
  | 'quota_rule'
  | 'quota_group'
  | 'oauth2_application'
  | 'site';

/** Small, non-secret facts: the carrier of a sign-in, the names of the fields changed, a flag's new value. */
export type AuditDetail = Record<string, string | number | boolean | null | string[]>;

export interface AuditEvent {
  action: AuditAction;
  target: { type: AuditTargetType; id?: number; name: string };
  /** `success` unless said otherwise. */
  outcome?: 'success' | 'failure';
  detail?: AuditDetail;
  /** Who acted, when not the caller of the running request or command (a sign-in names its own). */
  actor?: { id: number; name: string; address: string };
}
