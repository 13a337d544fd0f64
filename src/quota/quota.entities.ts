import { Column, Entity, Index } from 'typeorm';
import { bigintAsNumber, IdColumn, LongTextColumn, RefColumn, TextColumn } from '../database/columns';

/** A quota rule (docs/quota.md). `limit` is a reserved word in SQL, so the column is `limit_bytes`. */
@Entity('quota_rule')
@Index('IDX_quota_rule_name', ['name'], { unique: true })
export class QuotaRuleEntity {
  @IdColumn()
  id: number;

  @TextColumn(255)
  name: string;

  /** Bytes; -1 unlimited. */
  @Column({ name: 'limit_bytes', type: 'bigint', transformer: bigintAsNumber, default: 0 })
  limit: number;

  /** JSON array of subject strings, in the order given, duplicates kept (docs/quota.md). */
  @LongTextColumn()
  subjects: string;
}

/** A quota group (docs/quota.md). */
@Entity('quota_group')
@Index('IDX_quota_group_name', ['name'], { unique: true })
export class QuotaGroupEntity {
  @IdColumn()
  id: number;

  @TextColumn(255)
  name: string;
}

/** A rule in a group. */
@Entity('quota_group_rule')
@Index('IDX_quota_group_rule_group_id_rule_id', ['groupId', 'ruleId'], { unique: true })
@Index('IDX_quota_group_rule_rule_id', ['ruleId'])
export class QuotaGroupRuleEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  groupId: number;

  @RefColumn()
  ruleId: number;
}

/** A user or an organisation mapped to a group. */
@Entity('quota_group_mapping')
@Index('IDX_quota_group_mapping_group_id_target_id', ['groupId', 'targetId'], { unique: true })
@Index('IDX_quota_group_mapping_target_id', ['targetId'])
export class QuotaGroupMappingEntity {
  @IdColumn()
  id: number;

  @RefColumn()
  groupId: number;

  /** The id of the user or organisation. */
  @RefColumn()
  targetId: number;
}
