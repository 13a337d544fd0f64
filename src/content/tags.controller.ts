import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { bindOption, DeferredBody, LazyBody, ReadsBody } from '../common/body';
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
  @ApiOperation({ operationId: 'repoListTags', summary: "List a repository's tags" })
  @ApiPaging()
  @ApiOkResponse({ type: [TagWire] })
  @ApiErrors(404)
  async list(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string, @Paging() page: PageQuery): Promise<PagedList<TagWire>> {
    const found = await this.tags.list(caller, owner, repo, page);
    return new PagedList(found.items, found.total, page);
  }

  @Post('repos/:owner/:repo/tags')
  @Public('repository')
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoCreateTag', summary: 'Create a new git tag in a repository' })
  @ApiBody({ type: CreateTagOption })
  @ApiCreatedResponse({ type: TagWire })
  @ApiErrors(404, 409, 413, 422)
  create(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string, @DeferredBody() body: LazyBody): Promise<TagWire> {
    return this.tags.create(caller, owner, repo, () => bindOption(body, CreateTagOption));
  }

  @Get('repos/:owner/:repo/tags/*tag')
  @Public('repository')
  @ApiOperation({ operationId: 'repoGetTag', summary: 'Get the tag of a repository by tag name' })
  @ApiParam({ name: 'tag', type: String })
  @ApiOkResponse({ type: TagWire })
  @ApiErrors(404)
  get(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string, @WildcardParam('tag') tag: string): Promise<TagWire> {
    return this.tags.get(caller, owner, repo, tag);
  }

  @Delete('repos/:owner/:repo/tags/*tag')
  @Public('repository')
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteTag', summary: "Delete a repository's tag by name" })
  @ApiParam({ name: 'tag', type: String })
  @ApiEmpty()
  @ApiErrors(404, 409)
  async delete(@Caller() caller: AuthContext, @Param('owner') owner: string, @Param('repo') repo: string, @WildcardParam('tag') tag: string): Promise<void> {
    await this.tags.delete(caller, owner, repo, tag);
  }
}
