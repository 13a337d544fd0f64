import { Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { BranchesService } from './branches.service';
import { CreateBranchOption } from './content.options';
import { BranchWire } from './content.wire';
import { WildcardParam } from './route-params';

@ApiTags('repository')
@Controller()
export class BranchesController {
  constructor(private readonly branches: BranchesService) {}

  @Get('repos/:owner/:repo/branches')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoListBranches', summary: "List a repository's branches" })
  @ApiPaging()
  @ApiOkResponse({ type: [BranchWire] })
  @ApiErrors(404)
  async list(@TargetRepository() target: RepositoryTarget, @Paging() page: PageQuery): Promise<PagedList<BranchWire>> {
    const found = await this.branches.list(target, page);
    return new PagedList(found.items, found.total, page);
  }

  @Post('repos/:owner/:repo/branches')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoCreateBranch', summary: 'Create a branch' })
  @ApiBody({ type: CreateBranchOption })
  @ApiCreatedResponse({ type: BranchWire })
  @ApiErrors(404, 409, 413, 422)
  async create(@TargetRepository() target: RepositoryTarget, @DeferredBody() body: LazyBody): Promise<BranchWire> {
    return this.branches.create(target, await bindOption(body, CreateBranchOption));
  }

  @Get('repos/:owner/:repo/branches/*branch')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoGetBranch', summary: 'Retrieve a specific branch from a repository, including its effective branch protection' })
  @ApiParam({ name: 'branch', type: String })
  @ApiOkResponse({ type: BranchWire })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget, @WildcardParam('branch') branch: string): Promise<BranchWire> {
    return this.branches.get(target, branch);
  }

  @Delete('repos/:owner/:repo/branches/*branch')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write' })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteBranch', summary: 'Delete a specific branch from a repository' })
  @ApiParam({ name: 'branch', type: String })
  @ApiEmpty()
  @ApiErrors(403, 404)
  async delete(@TargetRepository() target: RepositoryTarget, @WildcardParam('branch') branch: string): Promise<void> {
    await this.branches.delete(target, branch);
  }
}
