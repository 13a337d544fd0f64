import { ApiPropertyOptional, ApiSchema } from '@nestjs/swagger';
import { InvalidInputError } from '../common/errors';
import { Field, FieldRule, fieldFailure, FieldSpec } from '../common/fields';
import { isQuotaSubject, unrecognizedSubject } from './quota-subjects';

/**
 * Rule and group names go into URL paths (`{quotarule}`, `{quotagroup}`): a name that could not be
 * addressed there is refused (docs/quota.md).
 */
const ADDRESSABLE = /^[^/?#%\s\p{Cc}]+$/u;

export const RULE_NAME: FieldRule = { name: 'invalid rule name', test: (value) => ADDRESSABLE.test(String(value)) };
export const GROUP_NAME: FieldRule = { name: 'invalid group name', test: (value) => ADDRESSABLE.test(String(value)) };

/** int64 limits that JSON numbers carry exactly; a larger one could not be stored as given. */
const SAFE_LIMIT: FieldRule = { name: 'Range', test: (value) => Number.isSafeInteger(value) };

/** Enough for every quota subject several times over; keeps the stored list small. */
const MAX_SUBJECTS = 100;
const MAX_NAME = 255;

const RULE_NAME_SPEC: FieldSpec = {
  field: 'Name',
  type: 'string',
  required: true,
  maxSize: MAX_NAME,
  rules: [RULE_NAME],
  description: 'Name of the rule to create',
};
const LIMIT_SPEC: FieldSpec = {
  field: 'Limit',
  type: 'integer',
  required: true,
  rules: [SAFE_LIMIT],
  description: 'The limit set by the rule, in bytes (-1 unlimited)',
};
const SUBJECTS_SPEC: FieldSpec = { field: 'Subjects', type: 'strings', maxSize: MAX_SUBJECTS, description: 'The subjects affected by the rule' };

/** Every subject must be a known quota subject (docs/quota.md), else 422 and nothing changes. */
export function assertSubjects(subjects: string[] | undefined | null): void {
  for (const subject of subjects ?? []) if (!isQuotaSubject(subject)) throw new InvalidInputError(unrecognizedSubject(subject));
}

/** Body of POST /admin/quota/rules (docs/quota.md). */
@ApiSchema({ name: 'CreateQuotaRuleOptions' })
export class CreateQuotaRuleOption {
  @Field(RULE_NAME_SPEC)
  name: string;

  @Field(LIMIT_SPEC)
  limit: number;

  @Field(SUBJECTS_SPEC)
  subjects?: string[] | null;
}

/** Body of PATCH /admin/quota/rules/{quotarule}: absent or null fields stay as they are. */
@ApiSchema({ name: 'EditQuotaRuleOptions' })
export class EditQuotaRuleOption {
  @Field({ ...LIMIT_SPEC, required: false, nullable: true, description: 'The limit set by the rule' })
  limit?: number | null;

  @Field({ ...SUBJECTS_SPEC, nullable: true })
  subjects?: string[] | null;
}

/** A rule listed in a new group: created when its name does not exist yet (docs/quota.md). */
export interface InlineRule {
  name: string;
  limit: number;
  subjects: string[];
}

/** Body of POST /admin/quota/groups (docs/quota.md). */
@ApiSchema({ name: 'CreateQuotaGroupOptions' })
export class CreateQuotaGroupOption {
  @Field({ field: 'Name', type: 'string', required: true, maxSize: MAX_NAME, rules: [GROUP_NAME], description: 'Name of the quota group to create' })
  name: string;

  @ApiPropertyOptional({ type: [CreateQuotaRuleOption], description: 'Rules to add to the newly created group. If a rule does not exist, it will be created.' })
  rules?: unknown;
}

/**
 * The inline rules of a new group, checked in order: each rule's name (`[Rules[<i>].Name]: …`), its limit
 * and subjects as the fields of a rule. A missing limit becomes 0, missing subjects none.
 */
export function inlineRules(value: unknown): InlineRule[] {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) throw new InvalidInputError('[Rules]: must be an array of rules');
  if (value.length > MAX_SUBJECTS) throw new InvalidInputError('[Rules]: MaxSize');
  return value.map((item: unknown, index) => {
    const field = (name: string) => `Rules[${index}].${name}`;
    if (typeof item !== 'object' || item === null || Array.isArray(item)) throw new InvalidInputError(`[${field('Name')}]: Required`);
    const rule = item as Record<string, unknown>;
    const failure =
      fieldFailure({ ...RULE_NAME_SPEC, field: field('Name') }, rule.name) ??
      fieldFailure({ ...LIMIT_SPEC, required: false, field: field('Limit') }, rule.limit) ??
      fieldFailure({ ...SUBJECTS_SPEC, field: field('Subjects') }, rule.subjects);
    if (failure) throw new InvalidInputError(failure);
    const subjects = (rule.subjects as string[] | null | undefined) ?? [];
    assertSubjects(subjects);
    return { name: rule.name as string, limit: (rule.limit as number | null | undefined) ?? 0, subjects };
  });
}

/** Body of POST /admin/users/{username}/quota/groups. */
@ApiSchema({ name: 'SetUserQuotaGroupsOptions' })
export class SetUserQuotaGroupsOption {
  @Field({ field: 'Groups', type: 'strings', maxSize: 1000, nullable: true, description: 'Quota groups the user shall have' })
  groups?: string[] | null;
}
