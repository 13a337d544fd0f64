import { Injectable } from '@nestjs/common';
import { SiteConfig } from '../config/slices';
import { SshEndpoint } from './ssh-endpoint';

/** Where clients reach this site: ROOT_URL, its host, and the SSH endpoint that `ssh_url` names. */
export interface Site {
  rootUrl: string;
  rootHost: string;
  ssh: { user: string; host: string; port: number };
}

/**
 * The one provider of the site's absolute addresses: every absolute URL (html_url, clone URLs, API links) and
 * the SSH endpoint are built from it, so that a mapper is handed one object rather than pieces of configuration.
 */
@Injectable()
export class SiteUrls implements Site {
  readonly rootUrl: string;
  readonly rootHost: string;

  constructor(
    siteConfig: SiteConfig,
    readonly ssh: SshEndpoint,
  ) {
    this.rootUrl = siteConfig.rootUrl;
    this.rootHost = siteConfig.rootHost;
  }

  /** `{ROOT_URL}api/v1`, the base of every API link. */
  get apiBase(): string {
    return `${this.rootUrl}api/v1`;
  }
}
