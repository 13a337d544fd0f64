import { Injectable } from '@nestjs/common';
import type { RemoteCredentials } from '../git/git-remotes';
import { SecretBox } from '../secrets/secret-box';

/** A mirror's fetch credentials, sealed for the `mirror.credentials` column and opened only to hand them to git. */
@Injectable()
export class MirrorCredentials {
  constructor(private readonly box: SecretBox) {}

  seal(credentials: RemoteCredentials): string {
    return this.box.seal(JSON.stringify({ username: credentials.username, password: credentials.password }));
  }

  open(sealed: string): RemoteCredentials | undefined {
    if (sealed === '') return undefined;
    const value = JSON.parse(this.box.open(sealed)) as RemoteCredentials;
    return { username: String(value.username), password: String(value.password) };
  }
}
