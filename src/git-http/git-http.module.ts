import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { GitModule } from '../git/git.module';
import { ReposModule } from '../repos/repos.module';
import { GitHttpHandler } from './git-http.handler';

/** Smart HTTP git routes; bootstrap.ts mounts GitHttpHandler ahead of the API's middleware. */
@Module({
  imports: [AuthModule, GitModule, ReposModule],
  providers: [GitHttpHandler],
  exports: [GitHttpHandler],
})
export class GitHttpModule {}
