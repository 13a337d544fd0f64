import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { GitConfig } from '../config/slices';
import { deliverTo } from './download-delivery';
import { DownloadsService } from './downloads.service';
import { WildcardParam } from './route-params';
import { queryString } from '../http/query';

@ApiTags('repository')
@Controller()
export class DownloadsController {
  private readonly rate: { minRate: number; windowMs: number };

  constructor(
    private readonly downloads: DownloadsService,
    gitConfig: GitConfig,
  ) {
    this.rate = { minRate: gitConfig.minTransferRate, windowMs: gitConfig.transferWindowMs };
  }

  @Get('repos/:owner/:repo/raw/*filepath')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoGetRawFile', summary: 'Get a file from a repository' })
  @ApiParam({ name: 'filepath', type: String, description: 'path of the file; may start with a branch, tag or commit when `ref` is not given' })
  @ApiQuery({ name: 'ref', required: false, description: 'The name of the commit/branch/tag. Default the repository’s default branch' })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'Returns raw file content.', schema: { type: 'string', format: 'binary' } })
  @ApiErrors(404, 422)
  async raw(
    @TargetRepository() target: RepositoryTarget,
    @WildcardParam('filepath') path: string,
    @Query() query: Record<string, unknown>,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    await this.downloads.raw(target, path, queryString(query.ref), ifNoneMatch, deliverTo(response, this.rate));
  }

  @Get('repos/:owner/:repo/media/*filepath')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({
    operationId: 'repoGetRawFileOrLFS',
    summary: 'Get a file or its LFS object from a repository',
    description: 'A Git LFS pointer file whose object the repository holds is answered with the object; any other file as /raw answers it.',
  })
  @ApiParam({ name: 'filepath', type: String })
  @ApiQuery({ name: 'ref', required: false })
  @ApiProduces('application/octet-stream')
  @ApiOkResponse({ description: 'Returns raw file content.', schema: { type: 'string', format: 'binary' } })
  @ApiErrors(404, 422)
  async media(
    @TargetRepository() target: RepositoryTarget,
    @WildcardParam('filepath') path: string,
    @Query() query: Record<string, unknown>,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() response: Response,
  ): Promise<void> {
    await this.downloads.media(target, path, queryString(query.ref), ifNoneMatch, deliverTo(response, this.rate));
  }

  @Get('repos/:owner/:repo/archive/*archive')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoGetArchive', summary: 'Get an archive of a repository' })
  @ApiParam({ name: 'archive', type: String, description: 'the git reference for download with attached archive format (e.g. main.zip, v1.0.tar.gz)' })
  @ApiProduces('application/zip', 'application/gzip')
  @ApiOkResponse({ description: 'success', schema: { type: 'string', format: 'binary' } })
  @ApiErrors(404)
  async archive(@TargetRepository() target: RepositoryTarget, @WildcardParam('archive') archive: string, @Res() response: Response): Promise<void> {
    await this.downloads.archive(target, archive, deliverTo(response, this.rate));
  }
}
