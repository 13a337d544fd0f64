import { Controller, Delete, Get, HttpCode, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { CreateTagOption } from './content.options';
import { TagWire } from './content.wire';
import { WildcardParam } from './route-params';
import { TagsService } from './tags.service';

@ApiTags('repository')
@Controller()
export class TagsController {
  constructor(private readonly tags: TagsService) {}

  @Get('repos/:owner/:repo/tags')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoListTags', summary: "List a repository's tags" })
  @ApiPaging()
  @ApiOkResponse({ type: [TagWire] })
  @ApiErrors(404)
  async list(@TargetRepository() target: RepositoryTarget, @Paging() page: PageQuery): Promise<PagedList<TagWire>> {
    const found = await this.tags.list(target, page);
    return new PagedList(found.items, found.total, page);
  }

  @Post('repos/:owner/:repo/tags')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoCreateTag', summary: 'Create a new git tag in a repository' })
  @ApiBody({ type: CreateTagOption })
  @ApiCreatedResponse({ type: TagWire })
  @ApiErrors(404, 409, 413, 422)
  async create(@TargetRepository() target: RepositoryTarget, @DeferredBody() body: LazyBody): Promise<TagWire> {
    return this.tags.create(target, await bindOption(body, CreateTagOption));
  }

  @Get('repos/:owner/:repo/tags/*tag')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoGetTag', summary: 'Get the tag of a repository by tag name' })
  @ApiParam({ name: 'tag', type: String })
  @ApiOkResponse({ type: TagWire })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget, @WildcardParam('tag') tag: string): Promise<TagWire> {
    return this.tags.get(target, tag);
  }

  @Delete('repos/:owner/:repo/tags/*tag')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write' })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteTag', summary: "Delete a repository's tag by name" })
  @ApiParam({ name: 'tag', type: String })
  @ApiEmpty()
  @ApiErrors(404, 409)
  async delete(@TargetRepository() target: RepositoryTarget, @WildcardParam('tag') tag: string): Promise<void> {
    await this.tags.delete(target, tag);
  }
}
