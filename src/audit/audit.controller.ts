import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { SiteAdmin } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { toAuditEventWire } from './audit-event.mapper';
import { AuditEventWire } from './audit-event.wire';
import { auditFilter, AuditService } from './audit.service';

/** The audit log, for site admins. Forgejo has no such route: the operation id is Anvil's own. */
@ApiTags('admin')
@Controller()
export class AuditController {
  constructor(private readonly audit: AuditService) {}

  @Get('admin/audit')
  @SiteAdmin()
  @ApiOperation({ operationId: 'adminListAuditEvents', summary: 'List audit events, newest first' })
  @ApiQuery({ name: 'actor', required: false, type: String, description: "the acting user's login (`cli` for the command line)" })
  @ApiQuery({ name: 'action', required: false, type: String, description: 'an action (`repository.create`) or a family (`repository.*`)' })
  @ApiQuery({ name: 'target', required: false, type: String, description: "the target's name (`alice/tools`), optionally typed (`repository:alice/tools`)" })
  @ApiQuery({ name: 'since', required: false, type: String, format: 'date-time', description: 'only events at or after this time (RFC 3339)' })
  @ApiQuery({ name: 'before', required: false, type: String, format: 'date-time', description: 'only events before this time (RFC 3339)' })
  @ApiPaging()
  @ApiOkResponse({ type: [AuditEventWire], description: 'AuditEventList' })
  @ApiErrors(422)
  async adminListAuditEvents(@Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<AuditEventWire>> {
    const found = await this.audit.list(auditFilter(query), page);
    return pagedList(found, page, toAuditEventWire);
  }
}
