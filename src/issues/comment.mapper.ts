import type { Site } from '../common/site-urls';
import { formatTime } from '../common/time';
import type { RepositoryEntity } from '../repos/repository.entity';
import { repositoryUrls } from '../repos/repository.mapper';
import type { UserEntity } from '../users/user.entity';
import { toUserWire } from '../users/user.mapper';
import type { CommentWire } from './comment.wire';
import type { CommentEntity, IssueEntity } from './issue.entity';
import { ANONYMOUS_VIEW } from './issue.mapper';

/** Pure: the `Comment` JSON; the poster is shown as to anyone (Forgejo renders comment authors without a viewer). */
export function toCommentWire(comment: CommentEntity, issue: IssueEntity, repo: RepositoryEntity, owner: UserEntity, poster: UserEntity, site: Site): CommentWire {
  const page = `${repositoryUrls(owner, repo, site).html}/${issue.isPull ? 'pulls' : 'issues'}/${issue.repoIndex}`;
  return {
    id: comment.id,
    html_url: `${page}#issuecomment-${comment.id}`,
    pull_request_url: issue.isPull ? page : '',
    issue_url: issue.isPull ? '' : page,
    user: toUserWire(poster, ANONYMOUS_VIEW, site),
    original_author: '',
    original_author_id: 0,
    body: comment.body,
    assets: [],
    created_at: formatTime(comment.createdUnix),
    updated_at: formatTime(comment.updatedUnix),
  };
}
