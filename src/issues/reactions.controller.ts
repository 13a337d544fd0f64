import { Controller, Delete, Get, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { Response } from 'express';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public } from '../auth/route-auth';
import { ApiEmpty, ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedWires, PageQuery, Paging } from '../common/paging';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { EditReactionOption } from './reaction.options';
import { ReactionWire } from './reaction.wire';
import { ReactionsService } from './reactions.service';

/** Reactions to an issue and to its comments. */
@ApiTags('issue')
@Controller()
export class ReactionsController {
  constructor(private readonly reactions: ReactionsService) {}

  @Get('repos/:owner/:repo/issues/:index/reactions')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: 'Get a list reactions of an issue' })
  @ApiPaging()
  @ApiOkResponse({ type: [ReactionWire], description: 'ReactionList' })
  @ApiErrors(403, 404)
  async listOfIssue(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Paging() page: PageQuery): Promise<PagedList<ReactionWire>> {
    return pagedWires(await this.reactions.listOfIssue(target, index, page), page);
  }

  @Post('repos/:owner/:repo/issues/:index/reactions')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'Add a reaction to an issue' })
  @ApiBody({ type: EditReactionOption })
  @ApiOkResponse({ type: ReactionWire, description: 'the reaction was already given' })
  @ApiCreatedResponse({ type: ReactionWire })
  @ApiErrors(401, 403, 404)
  async addToIssue(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @DeferredBody() body: LazyBody,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ReactionWire> {
    const result = await this.reactions.add(target, { index }, await bindOption(body, EditReactionOption));
    response.status(result.created ? 201 : 200);
    return result.reaction;
  }

  @Delete('repos/:owner/:repo/issues/:index/reactions')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @HttpCode(200)
  @ApiOperation({ summary: 'Remove a reaction from an issue' })
  @ApiBody({ type: EditReactionOption })
  @ApiEmpty(200)
  @ApiErrors(401, 403, 404)
  async removeFromIssue(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<void> {
    await this.reactions.remove(target, { index }, await bindOption(body, EditReactionOption));
  }

  @Get('repos/:owner/:repo/issues/comments/:id/reactions')
  @Public('issue')
  @RepositoryRoute({ unit: 'repo.issues' })
  @ApiOperation({ summary: 'Get a list of reactions from a comment of an issue' })
  @ApiOkResponse({ type: [ReactionWire], description: 'ReactionList' })
  @ApiErrors(403, 404)
  listOfComment(@TargetRepository() target: RepositoryTarget, @Param('id') id: string): Promise<ReactionWire[]> {
    return this.reactions.listOfComment(target, id);
  }

  @Post('repos/:owner/:repo/issues/comments/:id/reactions')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'Add a reaction to a comment of an issue' })
  @ApiBody({ type: EditReactionOption })
  @ApiOkResponse({ type: ReactionWire, description: 'the reaction was already given' })
  @ApiCreatedResponse({ type: ReactionWire })
  @ApiErrors(401, 403, 404)
  async addToComment(
    @TargetRepository() target: RepositoryTarget,
    @Param('id') id: string,
    @DeferredBody() body: LazyBody,
    @Res({ passthrough: true }) response: Response,
  ): Promise<ReactionWire> {
    const result = await this.reactions.add(target, { commentId: id }, await bindOption(body, EditReactionOption));
    response.status(result.created ? 201 : 200);
    return result.reaction;
  }

  @Delete('repos/:owner/:repo/issues/comments/:id/reactions')
  @AuthenticatedLater('issue')
  @RepositoryRoute({ unit: 'repo.issues', needsIssueTracker: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @HttpCode(200)
  @ApiOperation({ summary: 'Remove a reaction from a comment of an issue' })
  @ApiBody({ type: EditReactionOption })
  @ApiEmpty(200)
  @ApiErrors(401, 403, 404)
  async removeFromComment(@TargetRepository() target: RepositoryTarget, @Param('id') id: string, @DeferredBody() body: LazyBody): Promise<void> {
    await this.reactions.remove(target, { commentId: id }, await bindOption(body, EditReactionOption));
  }
}
