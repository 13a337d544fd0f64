import { DynamicModule, Global, Module, Provider } from '@nestjs/common';
import { APP_CONFIG, AppConfig } from './config';
import {
  AuditConfig,
  ContentConfig,
  GitConfig,
  HttpConfig,
  IntegrityConfig,
  IssueConfig,
  LfsConfig,
  LogConfig,
  MarkdownConfig,
  MirrorConfig,
  NetworkConfig,
  PagingConfig,
  QuotaConfig,
  RateLimitConfig,
  ReverseProxyConfig,
  SiteConfig,
  SshConfig,
  StorageConfig,
  UploadConfig,
  WebhookConfig,
} from './slices';

/**
 * Every slice of one AppConfig. A group of AppConfig is its slice itself (the same object); a slice of top-level
 * settings is a live view of them. Either way a slice reads what AppConfig holds now, as tests that change a
 * setting of a running app expect.
 */
export function configSlices(config: AppConfig) {
  return {
    site: view(config, ['rootUrl', 'rootHost']) as SiteConfig,
    storage: view(config, ['dataDir', 'secretKey', 'storageReserveBytes']) as StorageConfig,
    integrity: view(config, ['reconcileStaleAfterMs', 'reconcileStartBudget', 'processLeaseMs']) as IntegrityConfig,
    content: view(config, ['maxDisplayFileBytes']) as ContentConfig,
    issues: view(config, ['maxPinnedIssues', 'listCacheMs']) as IssueConfig,
    network: view(config, ['allowLocalNetworks']) as NetworkConfig,
    log: view(config, ['logLevel', 'logFile', 'logStream']) as LogConfig,
    quota: config.quota,
    paging: config.paging,
    markdown: config.markdown,
    uploads: config.uploads,
    audit: config.audit,
    lfs: config.lfs,
    http: config.http,
    rateLimits: config.rateLimits,
    ssh: config.ssh,
    git: config.git,
    mirrors: config.mirrors,
    webhooks: config.webhooks,
    reverseProxy: config.reverseProxy,
  };
}

type Slices = ReturnType<typeof configSlices>;

const TOKENS: { [K in keyof Slices]: abstract new () => Slices[K] } = {
  site: SiteConfig,
  storage: StorageConfig,
  integrity: IntegrityConfig,
  content: ContentConfig,
  issues: IssueConfig,
  network: NetworkConfig,
  log: LogConfig,
  quota: QuotaConfig,
  paging: PagingConfig,
  markdown: MarkdownConfig,
  uploads: UploadConfig,
  audit: AuditConfig,
  lfs: LfsConfig,
  http: HttpConfig,
  rateLimits: RateLimitConfig,
  ssh: SshConfig,
  git: GitConfig,
  mirrors: MirrorConfig,
  webhooks: WebhookConfig,
  reverseProxy: ReverseProxyConfig,
};

function view<K extends keyof AppConfig>(config: AppConfig, keys: readonly K[]): Pick<AppConfig, K> {
  const slice = {} as Pick<AppConfig, K>;
  for (const key of keys) Object.defineProperty(slice, key, { enumerable: true, get: () => config[key] });
  return slice;
}

/**
 * Provides each slice of the one validated AppConfig under its own token (slices.ts). It holds the whole
 * AppConfig because it is what cuts it into slices; APP_CONFIG itself is provided only for BodyGuard, whose
 * routes compute their body limits from any setting, and for WebhookDispatcher, which hands its delivery process
 * what opening a database connection of its own takes (as start-up does).
 */
@Global()
@Module({})
export class ConfigModule {
  static forRoot(config: AppConfig): DynamicModule {
    const slices = configSlices(config);
    const providers: Provider[] = (Object.keys(TOKENS) as (keyof Slices)[]).map((name) => ({ provide: TOKENS[name], useValue: slices[name] }));
    providers.push({ provide: APP_CONFIG, useValue: config });
    return { module: ConfigModule, providers, exports: providers.map((provider) => (provider as { provide: unknown }).provide as never) };
  }
}
