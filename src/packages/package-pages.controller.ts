import { Controller, Get, Header, Param } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { AuthContext } from '../auth/auth-context';
import { Caller, Public } from '../auth/route-auth';
import { html, page, PAGE_CSP } from '../pages/page-layout';
import { PackagesService } from './packages.service';
import { OutsideApi } from '../http/outside-api';
import { SiteUrls } from '../common/site-urls';

/**
 * `{ROOT_URL}{owner}/-/packages/{type}/{name}/{version}`, the `html_url` of a `Package` (Forgejo's web view):
 * a minimal HTML page of the version and its files, with their download links, under the owner's visibility.
 */
@ApiExcludeController()
@Controller()
export class PackagePagesController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly packages: PackagesService,
  ) {}

  @Get(':owner/-/packages/:type/:name/:version')
  @OutsideApi()
  @Public('package')
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', PAGE_CSP)
  async version(
    @Caller() caller: AuthContext,
    @Param('owner') owner: string,
    @Param('type') type: string,
    @Param('name') name: string,
    @Param('version') version: string,
  ): Promise<string> {
    const found = await this.packages.get(caller, owner, type, name, version);
    const files = await this.packages.files(caller, owner, type, name, version);
    const root = this.siteUrls.rootUrl;
    const path = [found.owner.login, found.type, found.name, found.version].map(encodeURIComponent);
    const items = files.map((file) => {
      const link = `${root}api/packages/${path[0]}/${path[1]}/${path[2]}/${path[3]}/${encodeURIComponent(file.name)}`;
      return html`<li><a href="${link}">${file.name}</a> (${file.Size} bytes, sha256 <code>${file.sha256}</code>)</li>`;
    });
    return page(
      `${found.name} ${found.version} · ${found.owner.login}`,
      html`<h1>${found.name} ${found.version}</h1>
        <p>A ${found.type} package of ${found.owner.login}, published ${found.created_at} by ${found.creator.login}.</p>
        <h2>Files</h2>
        <ul>
          ${items}
        </ul>
        <p><a href="${root}api/v1/packages/${path[0]}/${path[1]}/${path[2]}/${path[3]}">This version in the API (JSON)</a></p>`,
    );
  }
}
