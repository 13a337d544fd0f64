import { Controller, Get, Param, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public, SignedIn } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { RepositoryListsService } from './repository-lists.service';
import { RepositoryWire, SearchErrorWire, SearchResultsWire } from './repository.wire';

const SEARCH_PARAMETERS: { name: string; type: 'string' | 'boolean' | 'integer'; description: string }[] = [
  { name: 'q', type: 'string', description: 'keyword; commas separate alternatives' },
  { name: 'topic', type: 'boolean', description: 'limit the search to repositories with the keyword as topic' },
  { name: 'includeDesc', type: 'boolean', description: 'include search of keyword within repository description' },
  { name: 'uid', type: 'integer', description: 'search only for repos that the user with the given id owns or contributes to' },
  { name: 'priority_owner_id', type: 'integer', description: 'repo owner to prioritize in the results' },
  { name: 'starredBy', type: 'integer', description: 'search only for repos that the user with the given id has starred' },
  { name: 'private', type: 'boolean', description: 'include private repositories this user has access to (defaults to true)' },
  { name: 'is_private', type: 'boolean', description: 'show only public (false) or private (true) repositories' },
  { name: 'template', type: 'boolean', description: 'include template repositories this user has access to' },
  { name: 'archived', type: 'boolean', description: 'show only archived, non-archived or all repositories' },
  { name: 'mode', type: 'string', description: 'type of repository to search for: "source", "fork", "mirror" or "collaborative"' },
  { name: 'exclusive', type: 'boolean', description: 'with uid: only repositories the user owns' },
  { name: 'sort', type: 'string', description: 'alpha, created, updated, size, git_size, lfs_size, id, stars or forks' },
  { name: 'order', type: 'string', description: 'sort order, "asc" (default) or "desc"; ignored without sort' },
];

@ApiTags('repository')
@Controller()
export class RepositoryListsController {
  constructor(private readonly lists: RepositoryListsService) {}

  @Get('repos/search')
  @Public('repository')
  @ApiOperation({ summary: 'Search for repositories' })
  @ApiPaging()
  @SearchParameters()
  @ApiOkResponse({ type: SearchResultsWire })
  @ApiResponse({ status: 500, type: SearchErrorWire, description: 'SearchError' })
  @ApiErrors(422)
  async search(@Caller() caller: AuthContext, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    const found = await this.lists.search(caller, query, page);
    return pagedList(
      found,
      page,
      (repo) => repo,
      (data) => ({ ok: true, data }),
    );
  }

  @Get('user/repos')
  @SignedIn('user', 'repository')
  @ApiOperation({ summary: 'List the repos that the authenticated user owns' })
  @ApiPaging()
  @ApiQuery({
    name: 'order_by',
    required: false,
    type: String,
    description:
      'name (default), id, newest, oldest, recentupdate, leastupdate, alphabetically, reversealphabetically, size, reversesize, gitsize, reversegitsize, lfssize, reverselfssize, moststars, feweststars, mostforks, fewestforks',
  })
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(422, 500)
  async listMine(@Caller() caller: AuthContext, @Query() query: Record<string, unknown>, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    return pagedList(await this.lists.listMine(caller, query, page), page, (repo) => repo);
  }

  @Get('users/:username/repos')
  @Public('user', 'repository')
  @ApiOperation({ summary: 'List the repos owned by the given user' })
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(404, 500)
  async listOwnedBy(@Caller() caller: AuthContext, @Param('username') username: string, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    return pagedList(await this.lists.listOwnedBy(caller, username, page), page, (repo) => repo);
  }

  @Get('orgs/:org/repos')
  @Public('organization')
  @ApiOperation({ summary: "List an organization's repos" })
  @ApiPaging()
  @ApiOkResponse({ type: [RepositoryWire], description: 'RepositoryList' })
  @ApiErrors(404)
  async listOfOrganization(@Caller() caller: AuthContext, @Param('org') org: string, @Paging() page: PageQuery): Promise<PagedList<RepositoryWire>> {
    return pagedList(await this.lists.listOfOrganization(caller, org, page), page, (repo) => repo);
  }
}

function SearchParameters(): MethodDecorator {
  const decorators = SEARCH_PARAMETERS.map((parameter) =>
    ApiQuery({
      name: parameter.name,
      required: false,
      type: parameter.type === 'integer' ? Number : parameter.type === 'boolean' ? Boolean : String,
      description: parameter.description,
    }),
  );
  return (target, key, descriptor) => {
    for (const decorate of decorators) decorate(target, key, descriptor);
  };
}
