import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Controller, Get, Param, Query, Res } from '@nestjs/common';
import type { Response } from 'express';
import { ApiExtraModels, ApiOkResponse, ApiOperation, ApiParam, ApiQuery, ApiTags, getSchemaPath } from '@nestjs/swagger';
import { Public } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { GitDataService } from './git-data.service';
import { AnnotatedTagWire, GitBlobResponseWire, GitTreeResponseWire, ReferenceWire } from './git-data.wire';
import { WildcardParam } from './route-params';
import { queryString } from '../http/query';

function integer(value: unknown): number {
  const text = queryString(value) ?? '';
  return /^\d{1,9}$/.test(text.trim()) ? Number(text.trim()) : 0;
}

/** Git's own objects over the API (Forgejo's git data routes): refs, annotated tags, trees and blobs. */
@ApiTags('repository')
@ApiExtraModels(ReferenceWire)
@Controller()
export class GitDataController {
  constructor(private readonly data: GitDataService) {}

  @Get('repos/:owner/:repo/git/refs')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: "Get specified ref or filtered repository's refs" })
  @ApiOkResponse({ type: [ReferenceWire], description: 'ReferenceList' })
  @ApiErrors(404)
  all(@TargetRepository() target: RepositoryTarget): Promise<ReferenceWire | ReferenceWire[]> {
    return this.data.refs(target, '');
  }

  @Get('repos/:owner/:repo/git/refs/*ref')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ operationId: 'repoListGitRefs', summary: "Get specified ref or filtered repository's refs" })
  @ApiParam({ name: 'ref', type: String, description: 'part or full name of the ref(s) after refs/' })
  @ApiOkResponse({
    schema: { oneOf: [{ $ref: getSchemaPath(ReferenceWire) }, { type: 'array', items: { $ref: getSchemaPath(ReferenceWire) } }] },
    description: 'one Reference when the name is complete, else a ReferenceList',
  })
  @ApiErrors(404)
  filtered(@TargetRepository() target: RepositoryTarget, @WildcardParam('ref') ref: string): Promise<ReferenceWire | ReferenceWire[]> {
    return this.data.refs(target, ref);
  }

  @Get('repos/:owner/:repo/git/tags/:sha')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: 'Gets the tag object of an annotated tag (not lightweight tags)' })
  @ApiOkResponse({ type: AnnotatedTagWire })
  @ApiErrors(400, 404)
  tag(@TargetRepository() target: RepositoryTarget, @Param('sha') sha: string): Promise<AnnotatedTagWire> {
    return this.data.tag(target, sha);
  }

  @Get('repos/:owner/:repo/git/trees/:sha')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: 'Gets the tree of a repository.' })
  @ApiQuery({ name: 'recursive', required: false, type: Boolean, description: 'show all directories and files' })
  @ApiQuery({ name: 'page', required: false, type: Number, description: 'page number; the first page is 1' })
  @ApiQuery({ name: 'per_page', required: false, type: Number, description: 'entries per page; at most (and by default) 1000' })
  @ApiOkResponse({ type: GitTreeResponseWire })
  @ApiErrors(400, 404)
  async tree(
    @TargetRepository() target: RepositoryTarget,
    @Param('sha') sha: string,
    @Query() query: Record<string, unknown>,
    @Res({ passthrough: true }) response: Response,
  ): Promise<GitTreeResponseWire> {
    const recursive = ['1', 't', 'T', 'true', 'TRUE', 'True'].includes(queryString(query.recursive) ?? '');
    const tree = await this.data.tree(target, sha, { recursive, page: integer(query.page), perPage: integer(query.per_page) });
    // Forgejo states the number of entries in the header too, as for its lists.
    response.setHeader('X-Total-Count', String(tree.total_count));
    return tree;
  }

  @Get('repos/:owner/:repo/git/blobs/:sha')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  @ApiOperation({ summary: 'Gets the blob of a repository.' })
  @ApiOkResponse({ type: GitBlobResponseWire })
  @ApiErrors(400, 404)
  blob(@TargetRepository() target: RepositoryTarget, @Param('sha') sha: string): Promise<GitBlobResponseWire> {
    return this.data.blob(target, sha);
  }
}
