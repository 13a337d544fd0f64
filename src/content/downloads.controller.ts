import { pipeline } from 'node:stream/promises';
import { Controller, Get, Headers, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { GitConfig } from '../config/slices';
import { TransferWatch } from '../git/transfer-watch';
import { Deliver, DownloadsService } from './downloads.service';
import { WildcardParam } from './route-params';
import { queryString } from '../http/query';

/**
 * Streams a download to the HTTP response; a client that goes away ends it (and git with it), and so does one
 * that reads slower than the minimum transfer rate (GIT_MIN_TRANSFER_RATE): a reader that stops must not
 * keep git and its slot.
 */
function deliverTo(response: Response, rate: { minRate: number; windowMs: number }): Deliver {
  return async (download) => {
    response.status(download.status);
    for (const [name, value] of Object.entries(download.headers)) response.setHeader(name, value);
    if (!download.body || Buffer.isBuffer(download.body)) {
      // Nothing, or a small file already in memory: one write, no stream machinery.
      response.end(download.body ?? undefined);
      return;
    }
    const watch = new TransferWatch({ ...rate, waitingOnPeer: () => response.writableNeedDrain, onStall: () => response.destroy() });
    const body = download.body;
    body.on('data', (chunk: Buffer) => watch.count(chunk.length));
    try {
      await pipeline(body, response);
    } catch {
      // The client went away, or git failed part-way: the response is cut, never ended as if complete.
      response.destroy();
    } finally {
      watch.stop();
    }
  };
}

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
