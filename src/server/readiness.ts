import { Injectable } from '@nestjs/common';

/**
 * Whether this instance wants new requests. It stops wanting them the moment shutdown begins (SIGTERM), while
 * it still listens and answers: a gateway that checks `/api/healthz/ready` takes it out of rotation, and the
 * requests it still gets meanwhile are served as usual.
 */
@Injectable()
export class Readiness {
  private drainingSince: number | undefined;

  get draining(): boolean {
    return this.drainingSince !== undefined;
  }

  drain(): void {
    this.drainingSince ??= Date.now();
  }
}
