import { Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { Body } from '../http/body-guard';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { CreateBranchProtectionOption, EditBranchProtectionOption } from './branch-protection.options';
import { BranchProtectionWire } from './branch-protection.wire';
import { BranchProtectionsService } from './branch-protections.service';

@ApiTags('repository')
@Controller()
export class BranchProtectionsController {
  constructor(private readonly protections: BranchProtectionsService) {}

  @Get('repos/:owner/:repo/branch_protections')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @ApiOperation({ operationId: 'repoListBranchProtection', summary: 'List branch protections for a repository' })
  @ApiPaging()
  @ApiOkResponse({ type: [BranchProtectionWire], description: 'BranchProtectionList' })
  @ApiErrors(403, 404)
  async list(@TargetRepository() target: RepositoryTarget, @Paging() page: PageQuery): Promise<PagedList<BranchProtectionWire>> {
    const found = await this.protections.list(target, page);
    return new PagedList(found.items, found.total, page);
  }

  @Post('repos/:owner/:repo/branch_protections')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @ApiOperation({ operationId: 'repoCreateBranchProtection', summary: 'Create a branch protections for a repository' })
  @ApiCreatedResponse({ type: BranchProtectionWire, description: 'BranchProtection' })
  @ApiErrors(400, 403, 404, 422, 423)
  create(@TargetRepository() target: RepositoryTarget, @Body() option: CreateBranchProtectionOption): Promise<BranchProtectionWire> {
    return this.protections.create(target, option);
  }

  @Get('repos/:owner/:repo/branch_protections/:name')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @ApiOperation({ operationId: 'repoGetBranchProtection', summary: 'Get a specific branch protection for the repository' })
  @ApiOkResponse({ type: BranchProtectionWire, description: 'BranchProtection' })
  @ApiErrors(403, 404)
  get(@TargetRepository() target: RepositoryTarget, @Param('name') name: string): Promise<BranchProtectionWire> {
    return this.protections.get(target, name);
  }

  @Patch('repos/:owner/:repo/branch_protections/:name')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @ApiOperation({ operationId: 'repoEditBranchProtection', summary: 'Edit a branch protections for a repository. Only fields that are set will be changed' })
  @ApiOkResponse({ type: BranchProtectionWire, description: 'BranchProtection' })
  @ApiErrors(403, 404, 422, 423)
  edit(@TargetRepository() target: RepositoryTarget, @Param('name') name: string, @Body() option: EditBranchProtectionOption): Promise<BranchProtectionWire> {
    return this.protections.edit(target, name, option);
  }

  @Delete('repos/:owner/:repo/branch_protections/:name')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteBranchProtection', summary: 'Delete a specific branch protection for the repository' })
  @ApiEmpty()
  @ApiErrors(403, 404, 423)
  async delete(@TargetRepository() target: RepositoryTarget, @Param('name') name: string): Promise<void> {
    await this.protections.delete(target, name);
  }
}
