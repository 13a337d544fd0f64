import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from './repository-assignment';
import { Controller, Delete, Get, HttpCode, Param, Put, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiQuery, ApiTags } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { AuthenticatedLater, Caller, Public } from '../auth/route-auth';
import { Body } from '../http/body-guard';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedList, PageQuery, Paging } from '../common/paging';
import { formatTime } from '../common/time';
import { RepoTopicOption } from './repo-topic.option';
import { TopicListWire, TopicNameWire, TopicResponseWire } from './topic.wire';
import { TopicsService } from './topics.service';

@ApiTags('repository')
@Controller()
export class TopicsController {
  constructor(private readonly topics: TopicsService) {}

  @Get('repos/:owner/:repo/topics')
  @Public('repository')
  @RepositoryRoute()
  @ApiOperation({ summary: 'Get list of topics that a repository has' })
  @ApiPaging()
  @ApiOkResponse({ type: TopicNameWire })
  @ApiErrors(404)
  async list(@TargetRepository() target: RepositoryTarget, @Paging() page: PageQuery): Promise<PagedList<string>> {
    const found = await this.topics.list(target, page);
    return pagedList(
      found,
      page,
      (topic) => topic.name,
      (topics) => ({ topics }),
    );
  }

  @Put('repos/:owner/:repo/topics')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Replace list of topics for a repository' })
  @ApiEmpty()
  @ApiErrors(403, 404, 422)
  async replace(@TargetRepository() target: RepositoryTarget, @Body() option: RepoTopicOption): Promise<void> {
    await this.topics.replace(target, option.topics ?? []);
  }

  @Put('repos/:owner/:repo/topics/:topic')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Add a topic to a repository' })
  @ApiEmpty()
  @ApiErrors(403, 404, 422)
  async add(@TargetRepository() target: RepositoryTarget, @Param('topic') topic: string): Promise<void> {
    await this.topics.add(target, topic);
  }

  @Delete('repos/:owner/:repo/topics/:topic')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ mode: 'admin' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a topic from a repository' })
  @ApiEmpty()
  @ApiErrors(403, 404, 422)
  async remove(@TargetRepository() target: RepositoryTarget, @Param('topic') topic: string): Promise<void> {
    await this.topics.remove(target, topic);
  }

  @Get('topics/search')
  @Public('repository')
  @ApiOperation({ summary: 'search topics via keyword' })
  @ApiQuery({ name: 'q', required: false, description: 'keyword to search for' })
  @ApiPaging()
  @ApiOkResponse({ type: TopicListWire })
  async search(@Caller() caller: AuthContext, @Query('q') q: unknown, @Paging() page: PageQuery): Promise<PagedList<TopicResponseWire>> {
    const keyword = typeof q === 'string' ? q : Array.isArray(q) && typeof q[0] === 'string' ? q[0] : '';
    const found = await this.topics.search(caller, keyword, page);
    return pagedList(
      found,
      page,
      (topic) => ({
        id: topic.id,
        topic_name: topic.name,
        repo_count: topic.repoCount,
        created: formatTime(topic.createdUnix),
        updated: formatTime(topic.updatedUnix),
      }),
      (topics) => ({ topics }),
    );
  }
}
