import { MiddlewareConsumer, Module, NestModule, RequestMethod } from '@nestjs/common';
import cookieParser from 'cookie-parser';
import { SecretBox } from '../secrets/secret-box';
import { UsersModule } from '../users/users.module';
import { CHANGE_PASSWORD_PATH, ChangePasswordController } from './change-password.controller';
import { ChangePasswordService } from './change-password.service';
import { HomeController } from './home.controller';
import { PageCsrf } from './page-csrf';

/**
 * The only web pages: `/` (what this is, where the API documentation is), the password change that the API's
 * must-change-password answer points to, and the default avatar. No other web UI.
 */
@Module({
  imports: [UsersModule],
  controllers: [HomeController, ChangePasswordController],
  providers: [ChangePasswordService, PageCsrf, SecretBox],
  exports: [PageCsrf],
})
export class PagesModule implements NestModule {
  configure(consumer: MiddlewareConsumer): void {
    consumer.apply(cookieParser()).forRoutes({ path: CHANGE_PASSWORD_PATH, method: RequestMethod.ALL });
  }
}
