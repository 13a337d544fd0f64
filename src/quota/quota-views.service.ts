import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { ForbiddenError, InvalidInputError } from '../common/errors';
import { Page } from '../common/paging';
import { OrganizationStore } from '../users/organization.store';
import { OrganizationsService } from '../users/organizations.service';
import { UserEntity } from '../users/user.entity';
import { isQuotaSubject, unrecognizedSubject } from './quota-subjects';
import { QuotaEngine, QuotaState } from './quota.engine';
import type { QuotaUsedArtifactWire, QuotaUsedAttachmentWire, QuotaUsedPackageWire } from './quota.wire';

const EMPTY: Page<never> = { items: [], total: 0 };

/**
 * What a user or an organisation's owners see of its quota (behaviour 9): state, the check, and the items
 * that count against it. Release attachments and packages arrive with their own issue; until then those lists
 * are empty, and artifacts always are (Anvil has no CI runner).
 */
@Injectable()
export class QuotaViewsService {
  constructor(
    private readonly engine: QuotaEngine,
    private readonly organizations: OrganizationsService,
    private readonly organizationStore: OrganizationStore,
  ) {}

  state(target: UserEntity): Promise<QuotaState> {
    return this.engine.state(target.id);
  }

  /** `true` when the target is over quota for the subject, i.e. the action would be refused [D1]. */
  async isOverQuota(target: UserEntity, subject: string): Promise<boolean> {
    if (!isQuotaSubject(subject)) throw new InvalidInputError(unrecognizedSubject(subject));
    return !(await this.engine.evaluate(target.id, subject));
  }

  attachments(_target: UserEntity): Promise<Page<QuotaUsedAttachmentWire>> {
    return Promise.resolve(EMPTY);
  }

  packages(_target: UserEntity): Promise<Page<QuotaUsedPackageWire>> {
    return Promise.resolve(EMPTY);
  }

  artifacts(_target: UserEntity): Promise<Page<QuotaUsedArtifactWire>> {
    return Promise.resolve(EMPTY);
  }

  /**
   * The organisation of an /orgs/{org}/quota route, in the order of behaviour 1.6: unknown or invisible 404,
   * public-only token 403, sign-in 401, then owners and site admins only (403).
   */
  async ownedOrganization(viewer: AuthContext, name: string): Promise<UserEntity> {
    const org = await this.organizations.visibleByName(viewer, name);
    requireSignedIn(viewer);
    if (!viewer.isAdmin && !(await this.organizationStore.isOwner(org.id, viewer.user.id))) {
      throw new ForbiddenError('user should be an owner of the organization');
    }
    return org;
  }
}
