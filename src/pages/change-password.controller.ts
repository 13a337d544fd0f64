import { Controller, Get, Post, Query, Req, Res } from '@nestjs/common';
import { clientIp } from '../http/client-address';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import { Public } from '../auth/route-auth';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { DomainError, TooManyRequestsError } from '../common/errors';
import { RateLimits } from '../http/rate-limits';
import { ChangePasswordForm } from './change-password.form';
import { ChangePasswordService } from './change-password.service';
import { PageCsrf } from './page-csrf';
import { html, page, PAGE_CSP } from './page-layout';
import { OutsideApi } from '../http/outside-api';

export const CHANGE_PASSWORD_PATH = 'user/settings/change_password';

function send(response: Response, status: number, body: string): void {
  response.status(status).setHeader('Content-Security-Policy', PAGE_CSP);
  response.type('text/html; charset=utf-8').send(body);
}

function formPage(token: string, userName: string, message?: { error: boolean; text: string }): string {
  const notice = message ? html`<p class="${message.error ? 'error' : 'done'}" role="status">${message.text}</p>` : '';
  return page(
    'Change password · Anvil',
    html`<h1>Change password</h1>
      <p>An administrator asked you to choose a new password before you use the API.</p>
      ${notice}
      <form method="post" action="change_password" autocomplete="off">
        <input type="hidden" name="_csrf" value="${token}" />
        <label>User name <input name="user_name" value="${userName}" required autocomplete="username" /></label>
        <label>Current password <input type="password" name="old_password" required autocomplete="current-password" /></label>
        <label>New password <input type="password" name="password" required minlength="8" autocomplete="new-password" /></label>
        <label>New password again <input type="password" name="retype" required minlength="8" autocomplete="new-password" /></label>
        <button type="submit">Change password</button>
      </form>`,
  );
}

/**
 * `/user/settings/change_password`, where the API's "You must change your password" 403 points: a small
 * server-rendered form (no scripts), CSRF-protected and rate-limited per client address and user name.
 */
@ApiExcludeController()
@Controller()
export class ChangePasswordController {
  constructor(
    private readonly passwords: ChangePasswordService,
    private readonly csrf: PageCsrf,
    private readonly limits: RateLimits,
  ) {}

  @Get(CHANGE_PASSWORD_PATH)
  @OutsideApi()
  @Public()
  form(@Req() request: Request, @Res() response: Response, @Query('user_name') userName?: string): void {
    send(response, 200, formPage(this.csrf.token(request, response), typeof userName === 'string' ? userName : ''));
  }

  @Post(CHANGE_PASSWORD_PATH)
  @OutsideApi()
  @Public()
  @ReadsBody({ deferred: true })
  async change(@Req() request: Request, @Res() response: Response, @DeferredBody() body: LazyBody): Promise<void> {
    let form: ChangePasswordForm;
    try {
      form = await bindOption(body, ChangePasswordForm);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      send(response, 400, formPage(this.csrf.token(request, response), '', { error: true, text: 'Fill in every field.' }));
      return;
    }
    // Counted per client address and user name (RATE_LIMIT_CHANGE_PASSWORD, in RATE_LIMIT_STORE like every
    // limit): one address cannot try more than the limit against an account, and people behind one address do
    // not lock each other out.
    try {
      await this.limits.consume('changePassword', `${clientIp(request)}|${form.user_name.toLowerCase()}`);
    } catch (error) {
      if (!(error instanceof TooManyRequestsError)) throw error;
      response.setHeader('Retry-After', String(error.retryAfterSeconds));
      send(
        response,
        429,
        page(
          'Too many attempts · Anvil',
          html`<h1>Too many attempts</h1>
            <p class="error">Wait a minute, then try again.</p>`,
        ),
      );
      return;
    }
    if (!this.csrf.valid(request, form._csrf)) {
      send(
        response,
        403,
        formPage(this.csrf.token(request, response), form.user_name, { error: true, text: 'The form has expired or did not come from this site. Try again.' }),
      );
      return;
    }
    try {
      const name = await this.passwords.change(form.user_name, form.old_password, form.password, form.retype, clientIp(request));
      send(
        response,
        200,
        page(
          'Password changed · Anvil',
          html`<h1>Password changed</h1>
            <p class="done" role="status">The password of ${name} has been changed. You can use the API now.</p>`,
        ),
      );
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      send(response, error.status, formPage(this.csrf.token(request, response), form.user_name, { error: true, text: error.message }));
    }
  }
}
