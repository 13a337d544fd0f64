import { Controller, Get, Header, Param, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { Response } from 'express';
import { RepositoryTarget } from '../access/repository-policy';
import { RepositoryRoute, TargetRepository } from '../repos/repository-assignment';
import { Public } from '../auth/route-auth';
import { NotFoundError } from '../common/errors';
import { WildcardParam } from '../content/route-params';
import { html, page, PAGE_CSP } from '../pages/page-layout';
import type { ReleaseWire } from './release.wire';
import { ReleasesService } from './releases.service';
import { OutsideApi } from '../http/outside-api';
import { SiteUrls } from '../common/site-urls';

/**
 * The web URLs a `Release` names (Forgejo's `html_url`, `tarball_url`, `zipball_url`), so that a client that
 * follows them succeeds: a release's page is a minimal HTML view of the same JSON (no web UI beyond it), and
 * an archive link redirects to the API's archive route, which serves it under the same read rules.
 */
@ApiExcludeController()
@Controller()
export class ReleasePagesController {
  constructor(
    private readonly siteUrls: SiteUrls,
    private readonly releases: ReleasesService,
  ) {}

  @Get(':owner/:repo/releases/tag/*tag')
  @OutsideApi()
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.releases' })
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', PAGE_CSP)
  async release(@TargetRepository() target: RepositoryTarget, @WildcardParam('tag') tag: string): Promise<string> {
    return releasePage(target.owner.name, target.repo.name, await this.releases.getByTag(target, tag));
  }

  /** `{ROOT_URL}{owner}/{repo}/archive/{ref}.tar.gz|.zip` → `{ROOT_URL}api/v1/repos/{owner}/{repo}/archive/…` (path only, so any host works). */
  @Get(':owner/:repo/archive/*archive')
  @OutsideApi()
  @Public('repository')
  @RepositoryRoute({ unit: 'repo.code' })
  archive(@Param('owner') owner: string, @Param('repo') repo: string, @WildcardParam('archive') archive: string, @Res() response: Response): void {
    const segments = [owner, repo, ...archive.split('/')];
    // A `.` or `..` segment would make the client resolve the Location to some other API route: nothing to alias.
    if (segments.some((segment) => segment === '' || segment === '.' || segment === '..')) throw new NotFoundError();
    const [ownerPart, repoPart, ...ref] = segments.map(encodeURIComponent);
    response.redirect(302, `${new URL(this.siteUrls.rootUrl).pathname}api/v1/repos/${ownerPart}/${repoPart}/archive/${ref.join('/')}`);
  }
}

function releasePage(owner: string, repo: string, release: ReleaseWire): string {
  const title = release.name || release.tag_name;
  const archives = release.hide_archive_links
    ? html``
    : html`<li><a href="${release.tarball_url}">Source code (tar.gz)</a></li>
        <li><a href="${release.zipball_url}">Source code (zip)</a></li>`;
  const assets = release.assets.map((asset) => html`<li><a href="${asset.browser_download_url}">${asset.name}</a> (${asset.size} bytes)</li>`);
  const state = release.draft ? ' (draft)' : release.prerelease ? ' (pre-release)' : '';
  return page(
    `${title} · ${owner}/${repo}`,
    html`<h1>${title}${state}</h1>
      <p>${owner}/${repo}, tag <code>${release.tag_name}</code>, published ${release.published_at} by ${release.author.login}.</p>
      <pre style="white-space: pre-wrap">${release.body}</pre>
      <h2>Assets</h2>
      <ul>
        ${assets}${archives}
      </ul>
      <p><a href="${release.url}">This release in the API (JSON)</a></p>`,
  );
}
