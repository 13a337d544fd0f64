/**
 * Domain errors. Services throw these; the one HTTP error filter (http-error.filter.ts) turns each into its
 * status and the spec's body. Nothing below the controllers knows about HTTP exceptions.
 */
export abstract class DomainError extends Error {
  abstract readonly status: number;

  constructor(message?: string) {
    // A domain error is an answer (mostly a 4xx), not a fault: nothing reads its stack, and capturing one is
    // most of what throwing it costs on a refused request.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    try {
      super(message);
    } finally {
      Error.stackTraceLimit = limit;
    }
  }

  /** Extra fields merged into the standard `{message, url}` body (e.g. the quota error's user). */
  extraFields(): Record<string, unknown> {
    return {};
  }
}

/** 404 with an empty body: missing, or invisible to the caller (docs/api-conventions.md). */
export class NotFoundError extends DomainError {
  readonly status = 404;
  constructor(what = 'not found') {
    super(what);
  }
}

/** 400: malformed JSON, and the business refusals Forgejo signals with 400. */
export class BadRequestError extends DomainError {
  readonly status = 400;
}

export class UnauthorizedError extends DomainError {
  readonly status = 401;
}

export class ForbiddenError extends DomainError {
  readonly status = 403;
}

export class MethodNotAllowedError extends DomainError {
  readonly status = 405;
  constructor(message = 'method not allowed') {
    super(message);
  }
}

export class ConflictError extends DomainError {
  readonly status = 409;
}

/** 412: the change is refused in the state the resource is in (a merged pull request cannot be reopened). */
export class PreconditionFailedError extends DomainError {
  readonly status = 412;
}

/** 423: the repository is archived, so read-only (Forgejo's answer to writes on an archived repository). */
export class RepositoryArchivedError extends DomainError {
  readonly status = 423;
  constructor(fullName: string) {
    super(`repo ${fullName} is archived`);
  }
}

export class PayloadTooLargeError extends DomainError {
  readonly status = 413;
}

export class QuotaExceededError extends DomainError {
  readonly status = 413;
  constructor(
    readonly userId: number,
    readonly username: string,
  ) {
    super('quota exceeded');
  }

  override extraFields(): Record<string, unknown> {
    return { user_id: this.userId, username: this.username };
  }
}

/** 429: a rate limit or the sign-in queue is full; `Retry-After` says when to come back. */
export class TooManyRequestsError extends DomainError {
  readonly status = 429;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** 422: a field rule failed, or a value is well formed but semantically invalid. */
export class InvalidInputError extends DomainError {
  readonly status = 422;
}

export const SIGN_IN_REQUIRED = 'token is required';

/**
 * A failure of GET /repos/search, which answers `{ok: false, error}` instead of the standard body: 500, or the
 * 503/507 of a failing dependency (with its `Retry-After`). The message is the service's; the cause is logged.
 */
export class SearchError extends DomainError {
  readonly status: number;
  readonly retryAfterSeconds?: number;
  constructor(message: string, options: { status?: number; retryAfterSeconds?: number; cause?: unknown } = {}) {
    super(message);
    this.status = options.status ?? 500;
    if (options.retryAfterSeconds !== undefined) this.retryAfterSeconds = options.retryAfterSeconds;
    this.cause = options.cause;
  }
}
