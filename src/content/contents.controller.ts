import { Controller, Delete, Get, HttpCode, Post, Put, Query } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { ApiErrors } from '../common/openapi';
import { PagedList, PageQuery, Paging } from '../common/paging';
import { ChangeFilesOption, CreateFileOption, DeleteFileOption, UpdateFileOption } from './content.options';
import { ContentsWire, FileDeleteResponseWire, FileResponseWire, FilesResponseWire } from './content.wire';
import { ContentsService } from './contents.service';
import { FileWritesService } from './file-writes.service';
import { WildcardParam } from './route-params';
import { queryString } from '../http/query';

@ApiTags('repository')
@Controller()
export class ContentsController {
  constructor(
    private readonly contents: ContentsService,
    private readonly writes: FileWritesService,
  ) {}

  @Get('repos/:owner/:repo/contents')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoGetContentsList', summary: 'Gets the metadata of all the entries of the root dir' })
  @ApiQuery({ name: 'ref', required: false, description: 'The name of the commit/branch/tag. Default the repository’s default branch (usually master)' })
  @ApiOkResponse({ type: [ContentsWire] })
  @ApiErrors(404)
  list(@TargetRepository() target: RepositoryTarget, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<unknown> {
    return this.read(target, '', query, page);
  }

  @Post('repos/:owner/:repo/contents')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write', maintainerEdits: true })
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoChangeFiles', summary: 'Modify multiple files in a repository' })
  @ApiBody({ type: ChangeFilesOption })
  @ApiCreatedResponse({ type: FilesResponseWire })
  @ApiErrors(404, 409, 413, 422)
  async change(@TargetRepository() target: RepositoryTarget, @DeferredBody() body: LazyBody): Promise<FilesResponseWire> {
    return this.writes.change(target, await bindOption(body, ChangeFilesOption));
  }

  @Get('repos/:owner/:repo/contents/*filepath')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({
    operationId: 'repoGetContents',
    summary: 'Gets the metadata and contents (if a file) of an entry in a repository, or a list of entries if a dir',
    description:
      'A directory answers the whole list, as Forgejo, up to 1 000 entries (then X-Total-Count gives the full count); `page`/`limit` (optional) page a large directory, with X-Total-Count.',
  })
  @ApiParam({ name: 'filepath', type: String })
  @ApiQuery({ name: 'ref', required: false, description: 'The name of the commit/branch/tag. Default the repository’s default branch' })
  @ApiOkResponse({ type: ContentsWire })
  @ApiErrors(404, 422)
  get(
    @TargetRepository() target: RepositoryTarget,
    @WildcardParam('filepath') path: string,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
  ): Promise<unknown> {
    return this.read(target, path, query, page);
  }

  @Post('repos/:owner/:repo/contents/*filepath')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write', maintainerEdits: true })
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoCreateFile', summary: 'Create a file in a repository' })
  @ApiParam({ name: 'filepath', type: String })
  @ApiBody({ type: CreateFileOption })
  @ApiCreatedResponse({ type: FileResponseWire })
  @ApiErrors(404, 409, 413, 422)
  async create(
    @TargetRepository() target: RepositoryTarget,
    @WildcardParam('filepath') path: string,
    @DeferredBody() body: LazyBody,
  ): Promise<FileResponseWire> {
    return this.writes.create(target, path, await bindOption(body, CreateFileOption));
  }

  @Put('repos/:owner/:repo/contents/*filepath')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write', maintainerEdits: true })
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoUpdateFile', summary: 'Update a file in a repository' })
  @ApiParam({ name: 'filepath', type: String })
  @ApiBody({ type: UpdateFileOption })
  @ApiOkResponse({ type: FileResponseWire })
  @ApiErrors(404, 409, 413, 422)
  async update(
    @TargetRepository() target: RepositoryTarget,
    @WildcardParam('filepath') path: string,
    @DeferredBody() body: LazyBody,
  ): Promise<FileResponseWire> {
    return this.writes.update(target, path, await bindOption(body, UpdateFileOption));
  }

  @Delete('repos/:owner/:repo/contents/*filepath')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.code', mode: 'write', maintainerEdits: true })
  @HttpCode(200)
  @ReadsBody({ deferred: true })
  @ApiOperation({ operationId: 'repoDeleteFile', summary: 'Delete a file in a repository' })
  @ApiParam({ name: 'filepath', type: String })
  @ApiBody({ type: DeleteFileOption })
  @ApiOkResponse({ type: FileDeleteResponseWire })
  @ApiErrors(400, 404, 409, 413, 422)
  async delete(
    @TargetRepository() target: RepositoryTarget,
    @WildcardParam('filepath') path: string,
    @DeferredBody() body: LazyBody,
  ): Promise<FileDeleteResponseWire> {
    return this.writes.delete(target, path, await bindOption(body, DeleteFileOption));
  }

  /** A file answers one object; a directory the list (paged only when the caller asked for a page). */
  private async read(target: RepositoryTarget, path: string, query: Record<string, unknown>, page: PageQuery): Promise<unknown> {
    const paged = query.page !== undefined || query.limit !== undefined;
    const found = await this.contents.get(target, path, queryString(query.ref), paged ? page : null);
    if (!('items' in found)) return found;
    if (paged) return new PagedList(found.items, found.total, page);
    // A directory cut at MAX_UNPAGED_ENTRIES says how large it is (X-Total-Count); the caller pages with
    // page/limit (no Link header: its pages would be of the default size, not of this answer's).
    if (found.total > found.items.length) return new PagedList(found.items, found.total, { page: 1, limit: found.total, offset: 0 });
    return found.items;
  }
}
