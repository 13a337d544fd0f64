import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientAddress } from '../auth/credentials';
import { GitClient, runForGitClient } from './git-client';

/**
 * The git client of one HTTP request: its address and user for the fair shares, and a signal that fires when
 * the connection closes before the answer was finished, so that git run for it stops (a contents listing or a
 * history page does not go on for its whole time limit after the caller left). The signal is made on first
 * use: most requests run no git.
 */
export class RequestGitClient implements GitClient {
  private controller: AbortController | null = null;

  constructor(
    readonly address: string,
    readonly userId: number | null,
    private readonly response: ServerResponse,
  ) {}

  get signal(): AbortSignal {
    if (!this.controller) {
      const controller = new AbortController();
      this.controller = controller;
      if (this.response.destroyed && !this.response.writableFinished) controller.abort();
      else this.response.once('close', () => !this.response.writableFinished && controller.abort());
    }
    return this.controller.signal;
  }

  /** Runs `next` (the rest of the request's handling) on behalf of this request's client. */
  static run(request: IncomingMessage, response: ServerResponse, userId: number | null, next: () => void): void {
    runForGitClient(RequestGitClient.of(request, response, userId), next);
  }

  /** This request's client, for a caller that enters the request's scope with other facts too. */
  static of(request: IncomingMessage, response: ServerResponse, userId: number | null): RequestGitClient {
    return new RequestGitClient(clientAddress(request as Parameters<typeof clientAddress>[0]), userId, response);
  }
}
