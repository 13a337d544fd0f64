import { Controller, Delete, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import type { RepositoryTarget } from '../access/repository-policy';
import { AuthenticatedLater, Public, SignedIn } from '../auth/route-auth';
import { ApiErrors } from '../common/openapi';
import { ApiPaging, PagedList, pagedWires, PageQuery, Paging } from '../common/paging';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import {
  CreatePullReviewCommentOptions,
  CreatePullReviewOptions,
  DismissPullReviewOptions,
  PullReviewRequestOptions,
  SubmitPullReviewOptions,
} from './review.options';
import { PullReviewCommentWire, PullReviewWire } from './review.wire';
import { ReviewRequestsService } from './review-requests.service';
import { UserWire } from '../users/user.wire';
import { REVIEW_DISMISSAL_REFUSED, ReviewsService } from './reviews.service';

/** Reviews of a pull request and requests for them; registered before the pull request routes, whose `{base}/{head}` would match. */
@ApiTags('repository')
@Controller()
export class ReviewsController {
  constructor(
    private readonly reviews: ReviewsService,
    private readonly requests: ReviewRequestsService,
  ) {}

  @Get('repos/:owner/:repo/pulls/:index/reviews')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'List all reviews for a pull request' })
  @ApiPaging()
  @ApiOkResponse({ type: [PullReviewWire], description: 'PullReviewList' })
  @ApiErrors(404)
  async list(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Paging() page: PageQuery): Promise<PagedList<PullReviewWire>> {
    return pagedWires(await this.reviews.list(target, index, page), page);
  }

  @Post('repos/:owner/:repo/pulls/:index/reviews')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true })
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a review to an pull request' })
  @ApiBody({ type: CreatePullReviewOptions })
  @ApiOkResponse({ type: PullReviewWire })
  @ApiErrors(401, 403, 404, 422, 423)
  async create(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<PullReviewWire> {
    return this.reviews.create(target, index, await bindOption(body, CreatePullReviewOptions));
  }

  @Get('repos/:owner/:repo/pulls/:index/reviews/:id')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'Get a specific review for a pull request' })
  @ApiOkResponse({ type: PullReviewWire })
  @ApiErrors(404)
  get(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Param('id') id: string): Promise<PullReviewWire> {
    return this.reviews.get(target, index, id);
  }

  @Post('repos/:owner/:repo/pulls/:index/reviews/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true })
  @HttpCode(200)
  @ApiOperation({ summary: 'Submit a pending review to an pull request' })
  @ApiBody({ type: SubmitPullReviewOptions })
  @ApiOkResponse({ type: PullReviewWire })
  @ApiErrors(401, 404, 422, 423)
  async submit(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Param('id') id: string,
    @DeferredBody() body: LazyBody,
  ): Promise<PullReviewWire> {
    return this.reviews.submitPending(target, index, id, await bindOption(body, SubmitPullReviewOptions));
  }

  @Delete('repos/:owner/:repo/pulls/:index/reviews/:id')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a specific review from a pull request' })
  @ApiNoContentResponse({ description: 'empty' })
  @ApiErrors(403, 404, 422)
  delete(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Param('id') id: string): Promise<void> {
    return this.reviews.delete(target, index, id);
  }

  @Get('repos/:owner/:repo/pulls/:index/reviews/:id/comments')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'Get a specific review for a pull request' })
  @ApiOkResponse({ type: [PullReviewCommentWire], description: 'PullReviewCommentList' })
  @ApiErrors(404)
  comments(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Param('id') id: string): Promise<PullReviewCommentWire[]> {
    return this.reviews.comments(target, index, id);
  }

  @Post('repos/:owner/:repo/pulls/:index/reviews/:id/comments')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in', archived: 'refuse' })
  @ReadsBody({ deferred: true })
  @HttpCode(200)
  @ApiOperation({ summary: 'Add a new comment to a pull request review' })
  @ApiBody({ type: CreatePullReviewCommentOptions })
  @ApiOkResponse({ type: PullReviewCommentWire })
  @ApiErrors(401, 404, 422, 423)
  async addComment(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Param('id') id: string,
    @DeferredBody() body: LazyBody,
  ): Promise<PullReviewCommentWire> {
    return this.reviews.addComment(target, index, id, await bindOption(body, CreatePullReviewCommentOptions));
  }

  @Get('repos/:owner/:repo/pulls/:index/reviews/:id/comments/:comment')
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true })
  @ApiOperation({ summary: 'Get a pull review comment' })
  @ApiOkResponse({ type: PullReviewCommentWire })
  @ApiErrors(403, 404)
  comment(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Param('id') id: string,
    @Param('comment') comment: string,
  ): Promise<PullReviewCommentWire> {
    return this.reviews.comment(target, index, id, comment);
  }

  @Delete('repos/:owner/:repo/pulls/:index/reviews/:id/comments/:comment')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in' })
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a pull review comment' })
  @ApiNoContentResponse({ description: 'empty' })
  @ApiErrors(403, 404)
  deleteComment(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Param('id') id: string,
    @Param('comment') comment: string,
  ): Promise<void> {
    return this.reviews.deleteComment(target, index, id, comment);
  }

  @Post('repos/:owner/:repo/pulls/:index/reviews/:id/dismissals')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'admin', message: REVIEW_DISMISSAL_REFUSED })
  @ReadsBody({ deferred: true })
  @HttpCode(200)
  @ApiOperation({ summary: 'Dismiss a review for a pull request' })
  @ApiBody({ type: DismissPullReviewOptions })
  @ApiOkResponse({ type: PullReviewWire })
  @ApiErrors(401, 403, 404, 422)
  async dismiss(
    @TargetRepository() target: RepositoryTarget,
    @Param('index') index: string,
    @Param('id') id: string,
    @DeferredBody() body: LazyBody,
  ): Promise<PullReviewWire> {
    return this.reviews.dismiss(target, index, id, true, await bindOption(body, DismissPullReviewOptions));
  }

  @Post('repos/:owner/:repo/pulls/:index/reviews/:id/undismissals')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'admin', message: REVIEW_DISMISSAL_REFUSED })
  @HttpCode(200)
  @ApiOperation({ summary: 'Cancel to dismiss a review for a pull request' })
  @ApiOkResponse({ type: PullReviewWire })
  @ApiErrors(401, 403, 404, 422)
  undismiss(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @Param('id') id: string): Promise<PullReviewWire> {
    return this.reviews.dismiss(target, index, id, false, {});
  }

  // As /assignees: any signed-in reader of the repository.
  @Get('repos/:owner/:repo/reviewers')
  @SignedIn('repository')
  @RepositoryRoute()
  @ApiOperation({ summary: 'Return all users that can be requested to review in this repo' })
  @ApiOkResponse({ type: [UserWire], description: 'UserList' })
  @ApiErrors(404)
  reviewers(@TargetRepository() target: RepositoryTarget): Promise<UserWire[]> {
    return this.requests.reviewers(target);
  }

  @Post('repos/:owner/:repo/pulls/:index/requested_reviewers')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @ApiOperation({ summary: 'create review requests for a pull request' })
  @ApiBody({ type: PullReviewRequestOptions })
  @ApiCreatedResponse({ type: [PullReviewWire], description: 'PullReviewList' })
  @ApiErrors(401, 403, 404, 422)
  async request(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<PullReviewWire[]> {
    return this.requests.request(target, index, await bindOption(body, PullReviewRequestOptions));
  }

  @Delete('repos/:owner/:repo/pulls/:index/requested_reviewers')
  @AuthenticatedLater('repository')
  @RepositoryRoute({ unit: 'repo.pulls', needsPullRequests: true, mode: 'signed-in' })
  @ReadsBody({ deferred: true })
  @HttpCode(204)
  @ApiOperation({ summary: 'cancel review requests for a pull request' })
  @ApiBody({ type: PullReviewRequestOptions })
  @ApiNoContentResponse({ description: 'empty' })
  @ApiErrors(401, 403, 404, 422)
  async unrequest(@TargetRepository() target: RepositoryTarget, @Param('index') index: string, @DeferredBody() body: LazyBody): Promise<void> {
    return this.requests.unrequest(target, index, await bindOption(body, PullReviewRequestOptions));
  }
}
