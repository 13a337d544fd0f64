import { Controller, Get, Post, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Request, Response } from 'express';
import type { AuthContext } from '../auth/auth-context';
import { Public } from '../auth/route-auth';
import { bindOption } from '../http/body-binding';
import { DeferredBody, LazyBody, ReadsBody } from '../http/body-guard';
import { DomainError, TooManyRequestsError } from '../common/errors';
import { PageCsrf } from '../pages/page-csrf';
import { html, page, PAGE_CSP, SafeHtml } from '../pages/page-layout';
import { ConsentForm } from './consent.form';
import { Interaction, OAuth2SignIn } from './oauth2-sign-in.service';
import { INTERACTION_PATH } from './oauth2-provider';
import { grantsFullAccess } from './oauth2-scopes';
import { OutsideApi } from '../http/outside-api';

/** The page paths (outside /api/v1). */
export const INTERACTION_ROUTE = `${INTERACTION_PATH}/:uid`;

function send(response: Response, status: number, body: string): void {
  response.status(status).setHeader('Content-Security-Policy', PAGE_CSP);
  response.setHeader('Cache-Control', 'no-store');
  response.type('text/html; charset=utf-8').send(body);
}

function scopeList(interaction: Interaction): SafeHtml {
  const shown = interaction.scopes.filter((scope) => scope !== '');
  const asked =
    shown.length === 0
      ? html`<p>It asks for your identity only.</p>`
      : html`<p>It asks for: ${shown.map((scope, index) => html`${index > 0 ? ', ' : ''}<code>${scope}</code>`)}</p>`;
  // A grant naming no API scope lets its tokens do all the user may: the page says so in words.
  if (!grantsFullAccess([...interaction.grantedScopes, ...shown])) return asked;
  return html`${asked}
    <p class="warning"><strong>This gives the application full access to your account</strong>: it may read and change everything you can, on your behalf.</p>`;
}

function consentPage(interaction: Interaction, token: string, message?: string): string {
  const notice = message ? html`<p class="error" role="status">${message}</p>` : '';
  const signIn = interaction.signedIn
    ? html`<p>Signed in as <strong>${interaction.signedIn}</strong>.</p>`
    : html`<label>User name <input name="user_name" required autocomplete="username" /></label>
        <label>Password <input type="password" name="password" required autocomplete="current-password" /></label>`;
  return page(
    'Authorize application · Anvil',
    html`<h1>Authorize ${interaction.clientName}</h1>
      <p>
        The application <strong>${interaction.clientName}</strong> wants to act on your account; it will be sent back to
        <strong>${interaction.redirectUri}</strong>.
      </p>
      ${scopeList(interaction)} ${notice}
      <form method="post" action="${interaction.uid}" autocomplete="off">
        <input type="hidden" name="_csrf" value="${token}" />
        ${signIn}
        <button type="submit" name="decision" value="authorize">Authorize application</button>
        <button type="submit" name="decision" value="deny">Cancel</button>
      </form>`,
  );
}

const EXPIRED = page(
  'Sign-in expired · Anvil',
  html`<h1>Sign-in expired</h1>
    <p class="error" role="status">This authorization request has expired or was already used. Start again from the application.</p>`,
);

/**
 * The provider's sign-in and consent page, in the style of the change-password form: server-rendered, no
 * scripts, CSRF-protected, rate-limited per client address. With a carrier the API already believes (the
 * gateway's identity when reverse-proxy authentication is on, or Basic), the page asks for consent only.
 */
@ApiExcludeController()
@Controller()
export class OAuth2InteractionController {
  constructor(
    private readonly signIn: OAuth2SignIn,
    private readonly csrf: PageCsrf,
  ) {}

  @Get(INTERACTION_ROUTE)
  @OutsideApi()
  @Public()
  async show(@Req() request: Request, @Res() response: Response): Promise<void> {
    const interaction = await this.signIn.details(request, response);
    if (!interaction) return send(response, 400, EXPIRED);
    send(response, 200, consentPage(interaction, this.csrf.token(request, response)));
  }

  @Post(INTERACTION_ROUTE)
  @OutsideApi()
  @Public()
  @ReadsBody({ deferred: true })
  async decide(@Req() request: Request, @Res() response: Response, @DeferredBody() body: LazyBody): Promise<void> {
    try {
      await this.signIn.countAttempt(request, response);
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
    const interaction = await this.signIn.details(request, response);
    if (!interaction) return send(response, 400, EXPIRED);
    let form: ConsentForm;
    try {
      form = await bindOption(body, ConsentForm);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      return send(response, 400, consentPage(interaction, this.csrf.token(request, response), 'Fill in every field.'));
    }
    if (!this.csrf.valid(request, form._csrf)) {
      return send(
        response,
        403,
        consentPage(interaction, this.csrf.token(request, response), 'The form has expired or did not come from this site. Try again.'),
      );
    }
    try {
      if (form.decision === 'deny') await this.signIn.deny(request, response);
      else await this.signIn.authorize(request, response, interaction, form, request.auth as AuthContext | undefined);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      if (error instanceof TooManyRequestsError) response.setHeader('Retry-After', String(error.retryAfterSeconds));
      send(response, error.status, consentPage(interaction, this.csrf.token(request, response), error.message));
    }
  }
}
