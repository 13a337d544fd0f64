import { Injectable } from '@nestjs/common';
import { doubleCsrf } from 'csrf-csrf';
import type { Request, Response } from 'express';
import { SiteConfig } from '../config/slices';
import { SecretBox } from '../secrets/secret-box';

const FORM_TOKEN = Symbol('csrf form token');

/**
 * CSRF protection of the self-service forms (csrf-csrf's double-submit cookie): the form carries a token that
 * must match an HMAC-signed, SameSite=Strict, HttpOnly cookie. The signing secret is derived from SECRET_KEY, so
 * a form opened on one instance may be posted to another. There are no sessions, so the token is bound to the
 * site alone.
 */
@Injectable()
export class PageCsrf {
  private readonly csrf;

  constructor(siteConfig: SiteConfig, box: SecretBox) {
    const secret = box.derive('page forms csrf');
    const secure = siteConfig.rootUrl.startsWith('https:');
    this.csrf = doubleCsrf({
      getSecret: () => secret,
      getSessionIdentifier: () => '',
      // The __Host- prefix needs a secure cookie, so only over https.
      cookieName: secure ? '__Host-anvil.csrf' : 'anvil_csrf',
      cookieOptions: { sameSite: 'strict', path: '/', secure, httpOnly: true },
      getCsrfTokenFromRequest: (request) => (request as Request & { [FORM_TOKEN]?: string })[FORM_TOKEN],
    });
  }

  /** A fresh token for a form, with its cookie set on the response. */
  token(request: Request, response: Response): string {
    return this.csrf.generateCsrfToken(request, response, { overwrite: true });
  }

  /** Does the token the form sent match the request's cookie? */
  valid(request: Request, formToken: string | undefined): boolean {
    (request as Request & { [FORM_TOKEN]?: string })[FORM_TOKEN] = formToken;
    return this.csrf.validateRequest(request);
  }
}
