import * as path from 'node:path';
import { Controller, Get, Header, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { Public } from '../auth/route-auth';
import { PACKAGE_ROOT, SERVER_VERSION } from '../server/package-version';
import { html, page, PAGE_CSP } from './page-layout';
import { OutsideApi } from '../http/outside-api';

const DEFAULT_AVATAR = path.join(PACKAGE_ROOT, 'assets', 'img', 'avatar_default.png');

/** The few things outside the API a person or client meets first: the front page and the default avatar. */
@ApiExcludeController()
@Controller()
export class HomeController {
  @Get()
  @OutsideApi()
  @Public()
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', PAGE_CSP)
  home(): string {
    return page(
      'Anvil',
      html`<h1>Anvil</h1>
        <p>A self-hosted code host with a Forgejo/Gitea-compatible REST API. Version ${SERVER_VERSION}.</p>
        <ul>
          <li><a href="api/swagger">API documentation (Swagger UI)</a></li>
          <li><a href="swagger.v1.json">OpenAPI document</a></li>
          <li><a href="api/healthz">Health check</a></li>
          <li><a href="user/settings/change_password">Change your password</a></li>
        </ul>`,
    );
  }

  /** Every user's `avatar_url` (Anvil stores no avatars). */
  @Get('assets/img/avatar_default.png')
  @OutsideApi()
  @Public()
  avatar(@Res() response: Response): void {
    response.setHeader('Cache-Control', 'public, max-age=86400');
    response.sendFile(DEFAULT_AVATAR, { headers: { 'Content-Type': 'image/png' } });
  }
}
