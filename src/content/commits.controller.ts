import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, PageQuery, Paging } from '../common/paging';
import { CommitsService, flag } from './commits.service';
import { CommitWire } from './content.wire';
import { queryString } from '../http/query';
import { GitConfig } from '../config/slices';
import { deliverTo } from './download-delivery';

@ApiTags('repository')
@Controller()
export class CommitsController {
  private readonly rate: { minRate: number; windowMs: number };

  constructor(
    private readonly commits: CommitsService,
    gitConfig: GitConfig,
  ) {
    this.rate = { minRate: gitConfig.minTransferRate, windowMs: gitConfig.transferWindowMs };
  }

  @Get('repos/:owner/:repo/commits')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoGetAllCommits', summary: 'Get a list of all commits from a repository' })
  @ApiQuery({ name: 'sha', required: false, description: 'SHA or branch to start listing commits from (usually the default branch)' })
  @ApiQuery({ name: 'path', required: false, description: 'filepath of a file/dir' })
  @ApiQuery({ name: 'since', required: false, description: 'only commits after this date (RFC 3339)' })
  @ApiQuery({ name: 'until', required: false, description: 'only commits before this date (RFC 3339)' })
  @ApiQuery({ name: 'stat', required: false, type: Boolean, description: 'include diff stats for every commit (default true)' })
  @ApiQuery({ name: 'verification', required: false, type: Boolean, description: 'include verification for every commit (default true)' })
  @ApiQuery({ name: 'files', required: false, type: Boolean, description: 'include a list of affected files for every commit (default true)' })
  @ApiPaging()
  @ApiOkResponse({ type: [CommitWire] })
  @ApiErrors(404, 409, 422)
  async list(
    @TargetRepository() target: RepositoryTarget,
    @Query() query: Record<string, unknown>,
    @Paging() page: PageQuery,
    @Res({ passthrough: true }) response: Response,
  ): Promise<PagedList<CommitWire>> {
    const found = await this.commits.list(
      target,
      {
        sha: queryString(query.sha),
        path: queryString(query.path),
        since: queryString(query.since),
        until: queryString(query.until),
        stat: flag(queryString(query.stat)),
        files: flag(queryString(query.files)),
      },
      page,
    );
    // Forgejo's extra paging headers for this route.
    const pageCount = Math.max(1, Math.ceil(found.total / page.limit));
    response.setHeader('X-Page', String(page.page));
    response.setHeader('X-PerPage', String(page.limit));
    response.setHeader('X-PageCount', String(pageCount));
    response.setHeader('X-HasMore', String(page.page < pageCount));
    return new PagedList(found.items, found.total, page);
  }

  // Before `git/commits/:sha`, which a name ending in `.diff` or `.patch` would otherwise reach.
  @Get('repos/:owner/:repo/git/commits/:sha.:diffType')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: "Get a commit's diff or patch" })
  @ApiParam({ name: 'diffType', enum: ['diff', 'patch'], description: 'whether the output is diff or patch' })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'APIString', schema: { type: 'string' } })
  @ApiErrors(404)
  async diffOrPatch(
    @TargetRepository() target: RepositoryTarget,
    @Param('sha') sha: string,
    @Param('diffType') diffType: string,
    @Query() query: Record<string, unknown>,
    @Res() response: Response,
  ): Promise<void> {
    if (diffType !== 'diff' && diffType !== 'patch') {
      // A name with a dot in it (`release-1.2`) that ends in neither: the commit it names, as Forgejo's router
      // gives it to `git/commits/{sha}`.
      response.json(await this.get(target, `${sha}.${diffType}`, query));
      return;
    }
    // Streamed to the client (a diff has no size bound); a client that goes away stops git.
    await this.commits.diffOrPatch(target, sha, diffType, deliverTo(response, this.rate));
  }

  @Get('repos/:owner/:repo/git/commits/:sha')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoGetSingleCommit', summary: 'Get a single commit from a repository' })
  @ApiQuery({ name: 'stat', required: false, type: Boolean })
  @ApiQuery({ name: 'verification', required: false, type: Boolean })
  @ApiQuery({ name: 'files', required: false, type: Boolean })
  @ApiOkResponse({ type: CommitWire })
  @ApiErrors(404, 422)
  get(@TargetRepository() target: RepositoryTarget, @Param('sha') sha: string, @Query() query: Record<string, unknown>): Promise<CommitWire> {
    return this.commits.get(target, sha, { stat: flag(queryString(query.stat)), files: flag(queryString(query.files)) });
  }
}
