import { Injectable } from '@nestjs/common';
import type { UserEntity } from '../users/user.entity';

/**
 * Where repository creation asks the quota engine (behaviour 11.6: `size:repos:all` on the new owner, 413 when
 * refused). The engine is a later issue; until it provides QUOTA_GATE, every creation is allowed.
 */
export interface QuotaGate {
  /** Throws QuotaExceededError when `owner` may not get another repository. */
  assertCanCreateRepository(owner: UserEntity): Promise<void>;
  /**
   * Throws QuotaExceededError when a push that writes (creates or updates refs) into a repository of `owner`
   * must be refused: `size:repos:all` on the owner against the stored usage (git-transport.md 0.4, behaviour
   * 11.6). Pushes made only of deletions never ask.
   */
  assertCanPush(owner: UserEntity): Promise<void>;
}

export const QUOTA_GATE = Symbol('QUOTA_GATE');

@Injectable()
export class AllowAllQuotaGate implements QuotaGate {
  async assertCanCreateRepository(): Promise<void> {
    // No quota engine yet: nothing is refused.
  }

  async assertCanPush(): Promise<void> {
    // No quota engine yet: nothing is refused.
  }
}
