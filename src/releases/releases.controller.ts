import { Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import { ApiBody, ApiConsumes, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { NotFoundError } from '../common/errors';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { ReleaseAttachmentsService } from './release-attachments.service';
import { CreateReleaseOption, EditAttachmentOption, EditReleaseOption } from './release.options';
import { AttachmentWire, ReleaseWire } from './release.wire';
import { RELEASE_WRITE_REFUSED, ReleasesService } from './releases.service';
import { NoRequestTimeout } from '../http/request-timeout';
import { queryString } from '../http/query';
import { IncomingUpload, Upload } from '../http/upload-body';

/** `/repos/{owner}/{repo}/releases…` (Forgejo's API v1). The repository's read and write rules decide access. */
@ApiTags('repository')
@Controller()
export class ReleasesController {
  constructor(
    private readonly releases: ReleasesService,
    private readonly attachments: ReleaseAttachmentsService,
  ) {}

  @Get('repos/:owner/:repo/releases')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.releases' })
  @ApiOperation({ operationId: 'repoListReleases', summary: "List a repo's releases" })
  @ApiQuery({
    name: 'draft',
    required: false,
    type: Boolean,
    description: 'filter (exclude / include) drafts, if you dont have repo write access none will show',
  })
  @ApiQuery({ name: 'pre-release', required: false, type: Boolean, description: 'filter (exclude / include) pre-releases' })
  @ApiQuery({ name: 'q', required: false, type: String, description: 'Search string (in the tag name, title or notes)' })
  @ApiPaging()
  @ApiOkResponse({ type: [ReleaseWire], description: 'ReleaseList' })
  @ApiErrors(404)
  async list(
    @TargetRepository() target: RepositoryTarget,
    @Query('draft') draft: unknown,
    @Query('pre-release') prerelease: unknown,
    @Query('q') keyword: unknown,
    @Paging() page: PageQuery,
  ): Promise<PagedList<ReleaseWire>> {
    const filter = { draft: queryFlag(draft), prerelease: queryFlag(prerelease), keyword: (queryString(keyword) ?? '').trim() };
    return pagedList(await this.releases.list(target, filter, page), page, same);
  }

  @Post('repos/:owner/:repo/releases')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.releases', mode: 'write', message: RELEASE_WRITE_REFUSED })
  @ApiOperation({ operationId: 'repoCreateRelease', summary: 'Create a release' })
  @ApiBody({ type: CreateReleaseOption })
  @ApiCreatedResponse({ type: ReleaseWire })
  @ApiErrors(404, 409, 413, 422)
  create(@TargetRepository() target: RepositoryTarget, @Body() option: CreateReleaseOption): Promise<ReleaseWire> {
    return this.releases.create(target, option);
  }

  @Get('repos/:owner/:repo/releases/latest')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.releases' })
  @ApiOperation({
    operationId: 'repoGetLatestRelease',
    summary: 'Gets the most recent non-prerelease, non-draft release of a repository, sorted by created_at',
  })
  @ApiOkResponse({ type: ReleaseWire })
  @ApiErrors(404)
  latest(@TargetRepository() target: RepositoryTarget): Promise<ReleaseWire> {
    return this.releases.latest(target);
  }

  @Get('repos/:owner/:repo/releases/tags/:tag')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.releases' })
  @ApiOperation({ operationId: 'repoGetReleaseByTag', summary: 'Get a release by tag name' })
  @ApiOkResponse({ type: ReleaseWire })
  @ApiErrors(404)
  getByTag(@TargetRepository() target: RepositoryTarget, @Param('tag') tag: string): Promise<ReleaseWire> {
    return this.releases.getByTag(target, tag);
  }

  @Delete('repos/:owner/:repo/releases/tags/:tag')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.releases', mode: 'write', message: RELEASE_WRITE_REFUSED })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteReleaseByTag', summary: 'Delete a release by tag name (the tag stays)' })
  @ApiEmpty()
  @ApiErrors(404, 422)
  async deleteByTag(@TargetRepository() target: RepositoryTarget, @Param('tag') tag: string): Promise<void> {
    await this.releases.deleteByTag(target, tag);
  }

  @Get('repos/:owner/:repo/releases/:id')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.releases' })
  @ApiOperation({ operationId: 'repoGetRelease', summary: 'Get a release' })
  @ApiOkResponse({ type: ReleaseWire })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<ReleaseWire> {
    return this.releases.get(target, idParam(id));
  }

  @Patch('repos/:owner/:repo/releases/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.releases', mode: 'write', message: RELEASE_WRITE_REFUSED })
  @ApiOperation({ operationId: 'repoEditRelease', summary: 'Update a release' })
  @ApiBody({ type: EditReleaseOption })
  @ApiOkResponse({ type: ReleaseWire })
  @ApiErrors(404, 409, 422)
  edit(@TargetRepository() target: RepositoryTarget, @Param('id') id: string, @Body() option: EditReleaseOption): Promise<ReleaseWire> {
    return this.releases.edit(target, idParam(id), option);
  }

  @Delete('repos/:owner/:repo/releases/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.releases', mode: 'write', message: RELEASE_WRITE_REFUSED })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteRelease', summary: 'Delete a release (the tag stays)' })
  @ApiEmpty()
  @ApiErrors(404)
  async delete(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<void> {
    await this.releases.delete(target, idParam(id));
  }

  @Get('repos/:owner/:repo/releases/:id/assets')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.releases' })
  @ApiOperation({ operationId: 'repoListReleaseAttachments', summary: "List release's attachments" })
  @ApiOkResponse({ type: [AttachmentWire], description: 'AttachmentList' })
  @ApiErrors(404)
  listAttachments(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<AttachmentWire[]> {
    return this.attachments.list(target, idParam(id));
  }

  @Post('repos/:owner/:repo/releases/:id/assets')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.releases', mode: 'write', message: RELEASE_WRITE_REFUSED })
  @NoRequestTimeout()
  @ApiOperation({
    operationId: 'repoCreateReleaseAttachment',
    summary: 'Create a release attachment (multipart field `attachment` or `external_url`, or the raw body with `name`)',
  })
  @ApiConsumes('multipart/form-data', 'application/octet-stream')
  @ApiQuery({ name: 'name', required: false, type: String, description: 'name of the attachment' })
  @ApiBody({
    schema: {
      type: 'object',
      properties: {
        attachment: { type: 'string', format: 'binary', description: 'attachment to upload (this or external_url)' },
        external_url: { type: 'string', description: 'url to external asset (this or attachment)' },
      },
    },
  })
  @ApiCreatedResponse({ type: AttachmentWire })
  @ApiErrors(400, 404, 413)
  upload(
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @Query('name') name: unknown,
    @Query('external_url') externalUrl: unknown,
    @Upload() upload: IncomingUpload,
  ): Promise<AttachmentWire> {
    return this.attachments.upload(target, idParam(id), upload, { name: queryString(name) ?? '', externalUrl: queryString(externalUrl) ?? '' });
  }

  @Get('repos/:owner/:repo/releases/:id/assets/:attachment_id')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.releases' })
  @ApiOperation({ operationId: 'repoGetReleaseAttachment', summary: 'Get a release attachment' })
  @ApiOkResponse({ type: AttachmentWire })
  @ApiErrors(404)
  getAttachment(@TargetRepository() target: RepositoryTarget, @Param('id') id: string, @Param('attachment_id') attachmentId: string): Promise<AttachmentWire> {
    return this.attachments.get(target, idParam(id), idParam(attachmentId));
  }

  @Patch('repos/:owner/:repo/releases/:id/assets/:attachment_id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.releases', mode: 'write', message: RELEASE_WRITE_REFUSED })
  @HttpCode(201)
  @ApiOperation({ operationId: 'repoEditReleaseAttachment', summary: 'Edit a release attachment' })
  @ApiBody({ type: EditAttachmentOption })
  @ApiCreatedResponse({ type: AttachmentWire })
  @ApiErrors(400, 404, 422)
  editAttachment(
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @Param('attachment_id') attachmentId: string,
    @Body() option: EditAttachmentOption,
  ): Promise<AttachmentWire> {
    return this.attachments.edit(target, idParam(id), idParam(attachmentId), option);
  }

  @Delete('repos/:owner/:repo/releases/:id/assets/:attachment_id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.releases', mode: 'write', message: RELEASE_WRITE_REFUSED })
  @HttpCode(204)
  @ApiOperation({ operationId: 'repoDeleteReleaseAttachment', summary: 'Delete a release attachment' })
  @ApiEmpty()
  @ApiErrors(404)
  async deleteAttachment(@TargetRepository() target: RepositoryTarget, @Param('id') id: string, @Param('attachment_id') attachmentId: string): Promise<void> {
    await this.attachments.delete(target, idParam(id), idParam(attachmentId));
  }
}

const same = <T>(item: T) => item;

/** A path id that is not a positive integer names nothing (404). */
export function idParam(raw: string): number {
  if (!/^\d{1,15}$/.test(raw)) throw new NotFoundError();
  return Number(raw);
}

/** `true`/`false` filter; anything else (or absent) does not filter. */
function queryFlag(value: unknown): boolean | undefined {
  const text = queryString(value);
  if (text === 'true') return true;
  if (text === 'false') return false;
  return undefined;
}
