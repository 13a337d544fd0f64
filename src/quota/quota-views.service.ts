import { Injectable } from '@nestjs/common';
import type { AuthContext } from '../auth/auth-context';
import { requireSignedIn } from '../auth/route-auth';
import { ForbiddenError, InvalidInputError } from '../common/errors';
import { Page, PageQuery } from '../common/paging';
import { OrganizationPolicy } from '../access/organization-policy';
import { OrganizationsService } from '../users/organizations.service';
import { UserEntity } from '../users/user.entity';
import { isQuotaSubject, unrecognizedSubject } from './quota-subjects';
import { QuotaEngine, QuotaState } from './quota.engine';
import { QuotaUsageSources } from './quota-usage-sources';
import type { QuotaUsedArtifactWire, QuotaUsedAttachmentWire, QuotaUsedPackageWire } from './quota.wire';

const EMPTY: Page<never> = { items: [], total: 0 };

/**
 * What a user or an organisation's owners see of its quota (docs/quota.md): state, the check, and the items
 * that count against it. Release attachments and packages are listed by the modules that store them
 * (QuotaUsageSources); artifacts are always empty (Anvil has no CI runner).
 */
@Injectable()
export class QuotaViewsService {
  constructor(
    private readonly engine: QuotaEngine,
    private readonly organizations: OrganizationsService,
    private readonly organizationPolicy: OrganizationPolicy,
    private readonly sources: QuotaUsageSources,
  ) {}

  state(target: UserEntity): Promise<QuotaState> {
    return this.engine.state(target.id);
  }

  /** `true` when the target is over quota for the subject, i.e. the action would be refused. */
  async isOverQuota(target: UserEntity, subject: string): Promise<boolean> {
    if (!isQuotaSubject(subject)) throw new InvalidInputError(unrecognizedSubject(subject));
    return !(await this.engine.evaluate(target.id, subject));
  }

  attachments(target: UserEntity, page: PageQuery): Promise<Page<QuotaUsedAttachmentWire>> {
    return this.sources.of('attachmentsReleases').list(target.id, page);
  }

  packages(target: UserEntity, page: PageQuery): Promise<Page<QuotaUsedPackageWire>> {
    return this.sources.of('packages').list(target.id, page);
  }

  artifacts(_target: UserEntity): Promise<Page<QuotaUsedArtifactWire>> {
    return Promise.resolve(EMPTY);
  }

  /**
   * The organisation of an /orgs/{org}/quota route, in the order of docs/check-order.md: unknown or invisible 404,
   * public-only token 403, sign-in 401, then owners and site admins only (403).
   */
  async ownedOrganization(viewer: AuthContext, name: string): Promise<UserEntity> {
    const org = await this.organizations.visibleByName(viewer, name);
    requireSignedIn(viewer);
    if (!(await this.organizationPolicy.isOwner(viewer, org.id))) {
      throw new ForbiddenError('user should be an owner of the organization');
    }
    return org;
  }
}
