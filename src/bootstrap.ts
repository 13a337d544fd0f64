import 'reflect-metadata';
import * as fs from 'node:fs';
import type { Server } from 'node:http';
import * as path from 'node:path';
import './http/request-context';
import { ModulesContainer, NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, OpenAPIObject, SwaggerModule } from '@nestjs/swagger';
import type { Logger as PinoLogger } from 'pino';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { AuthenticationMiddleware } from './auth/authentication.middleware';
import { clientAddresses, TrustedProxies } from './http/client-address';
import { frontDoor } from './http/front-door';
import { JsonAnswersAdapter } from './http/json-answer';
import { appRouter, indexRoutes, prefilterRoutes, routerStack } from './http/route-prefilter';
import { withErrorExamples } from './common/openapi';
import { handlerOperationId, withForgejoOperationIds } from './common/operation-ids';
import { GitHttpHandler } from './git-http/git-http.handler';
import { LfsHttpHandler } from './lfs/lfs-http.handler';
import { PAGING_LIMITS } from './common/paging';
import { expectContinueOnlyForTrustedUploads } from './http/upload-body';
import { outsideApiPaths } from './http/outside-api';
import type { AppConfig } from './config/config';
import { secureDataDirectory } from './server/data-directory';
import { releaseBallastIfFull, StorageReserve } from './server/storage-reserve';
import { applyHttpServerSettings } from './http/server-settings';
import { MarkdownRenderer } from './markdown/markdown-renderer';
import { OAuth2Provider } from './oauth2/oauth2-provider';
import { QuietStartLogger } from './server/quiet-start-logger';
import { NestLogAdapter } from './logging/app-log';
import { APP_LOG } from './logging/logging.module';
import { RequestLog } from './logging/request-log';

export const API_PREFIX = 'api/v1';

/**
 * Builds the application exactly as it serves: main.ts and the e2e tests both start here. It takes the whole
 * AppConfig: it hands it to ConfigModule, which provides the slices, and sets up the request pipeline from it.
 */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
  secureDataDirectory(config.dataDir);
  releaseBallastIfFull(config.dataDir, config.storageReserveBytes);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), new JsonAnswersAdapter(config.rootUrl), {
    bodyParser: false,
    bufferLogs: true,
    // Until the application logger takes over, Nest stays quiet, and a failure is thrown for the caller to
    // word (server/serve.ts) instead of Nest's stack trace and process.exit.
    logger: false,
    abortOnError: false,
  });
  try {
    await prepareApp(app, config);
  } catch (error) {
    // A failure part-way (the SSH port taken, say) closes what had started: the push hooks' listener, the
    // database connection. A server that fails to start leaves nothing open behind it.
    await app.close().catch(() => undefined);
    throw error;
  }
  return app;
}

/** The global pipeline and settings of a created application, then its modules' start-up (`app.init`). */
async function prepareApp(app: NestExpressApplication, config: AppConfig): Promise<void> {
  app.useLogger(new QuietStartLogger(new NestLogAdapter(app.get<PinoLogger>(APP_LOG))));
  const requestLog = app.get(RequestLog);
  // The global pipeline, each concern registered once, in this order: the client's address (behind trusted
  // proxies, the forwarded one), read by everything after; metrics (when enabled) count every
  // request; git and LFS routes stream and meet none of the API's middleware; then the front door (request log,
  // security headers, CORS) and authentication, for everything else.
  app.use(clientAddresses(new TrustedProxies(config.reverseProxy.trustedProxies, config.reverseProxy.forwardingHeader)));
  // Below the low-space watermark, what would make the data grow is refused before anything reads its body.
  const storageReserve = app.get(StorageReserve);
  await storageReserve.start();
  app.use(storageReserve.middleware());
  if (config.metrics.enabled) await mountMetrics(app, config.metrics.token);
  app.use(app.get(GitHttpHandler).middleware(requestLog));
  app.use(app.get(LfsHttpHandler).middleware(requestLog));
  app.use(frontDoor({ requestLog, corsAllowedOrigins: config.corsAllowedOrigins }));
  // The OAuth2 provider's endpoints authenticate their clients themselves (Basic is a client's secret there).
  app.use(app.get(OAuth2Provider).middleware());
  const authentication = app.get(AuthenticationMiddleware);
  app.use(authentication.handle);
  expectContinueOnlyForTrustedUploads(app.getHttpServer() as Server);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set(PAGING_LIMITS, config.paging);
  app.setGlobalPrefix(API_PREFIX, { exclude: outsideApiPaths(app.get(ModulesContainer)) });
  applyHttpServerSettings(app.getHttpServer(), config.http);
  serveOpenApi(app, config);
  await app.init();
  prefilterRoutes(routerStack(app.getHttpAdapter().getInstance()));
  const router = appRouter(app.getHttpAdapter().getInstance());
  if (router) indexRoutes(router);
}

/**
 * METRICS_ENABLED: counting starts before any other handler, and GET /metrics is answered ahead of the API's
 * authentication (Prometheus sends METRICS_TOKEN as its bearer token, which is not an API token).
 */
async function mountMetrics(app: NestExpressApplication, token: string | undefined): Promise<void> {
  // Loaded only when enabled: prom-client is not needed otherwise.
  const { AppMetrics } = await import('./metrics/metrics');
  const metrics = new AppMetrics({ dataSource: app.get(DataSource), markdown: app.get(MarkdownRenderer) });
  app.use(metrics.requestCounter());
  app.use('/metrics', metrics.endpoint(token));
}

export function openApiDocument(app: NestExpressApplication, config: AppConfig) {
  const builder = new DocumentBuilder()
    .setTitle('Anvil API')
    .setDescription('This documentation describes the Anvil API (Forgejo/Gitea compatible).')
    .setVersion('1.1.1')
    .setLicense('MIT', 'http://opensource.org/licenses/MIT')
    // Relative, so Swagger UI's "Try it out" calls the host the page was opened from, whatever ROOT_URL says.
    .addServer(`${new URL(config.rootUrl).pathname}api/v1`)
    .addBasicAuth({ type: 'http', scheme: 'basic' }, 'BasicAuth')
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'Authorization', description: 'API tokens must be prepended with "token" followed by a space.' },
      'AuthorizationHeaderToken',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'query',
        name: 'token',
        description: 'This authentication option is deprecated for removal in Gitea 1.23. Please use AuthorizationHeaderToken instead.',
      },
      'Token',
    )
    .addApiKey(
      {
        type: 'apiKey',
        in: 'query',
        name: 'access_token',
        description: 'This authentication option is deprecated for removal in Gitea 1.23. Please use AuthorizationHeaderToken instead.',
      },
      'AccessToken',
    )
    .addApiKey(
      { type: 'apiKey', in: 'query', name: 'sudo', description: 'Sudo API request as the user provided as the key. Admin privileges are required.' },
      'SudoParam',
    )
    .addApiKey(
      { type: 'apiKey', in: 'header', name: 'Sudo', description: 'Sudo API request as the user provided as the key. Admin privileges are required.' },
      'SudoHeader',
    )
    .addSecurityRequirements('BasicAuth')
    .addSecurityRequirements('AuthorizationHeaderToken')
    .addSecurityRequirements('Token')
    .addSecurityRequirements('AccessToken')
    .addSecurityRequirements('SudoParam')
    .addSecurityRequirements('SudoHeader');
  const document = SwaggerModule.createDocument(app, builder.build(), { ignoreGlobalPrefix: false, operationIdFactory: handlerOperationId });
  // Paths are documented relative to the /api/v1 base path, as Forgejo's swagger does.
  document.paths = Object.fromEntries(
    Object.entries(document.paths)
      .filter(([path]) => path.startsWith(`/${API_PREFIX}/`))
      .map(([path, item]) => [path.slice(API_PREFIX.length + 1), item]),
  );
  return withErrorExamples(withForgejoOperationIds(document), config.rootUrl);
}

/**
 * The OpenAPI document is built at build time (`npm run openapi` writes openapi/swagger.v1.json, a test keeps
 * it current, `npm run build` copies it into dist/) and only read here, with this server's ROOT_URL put in.
 */
export const OPENAPI_FILE = path.join(__dirname, '..', 'openapi', 'swagger.v1.json');
/** The ROOT_URL the committed document was written with (test/support/test-app.ts). */
export const OPENAPI_FILE_ROOT_URL = 'http://anvil.test/';

export function builtOpenApiDocument(config: AppConfig): OpenAPIObject {
  const text = fs.readFileSync(OPENAPI_FILE, 'utf8');
  const swaggerUrl = JSON.stringify(`${config.rootUrl}api/swagger`);
  const document = JSON.parse(text.split(JSON.stringify(`${OPENAPI_FILE_ROOT_URL}api/swagger`)).join(swaggerUrl)) as OpenAPIObject;
  document.servers = [{ url: `${new URL(config.rootUrl).pathname}api/v1` }];
  return document;
}

function serveOpenApi(app: NestExpressApplication, config: AppConfig): void {
  // Read when first asked for, not at every start (a megabyte of JSON parsed, some 20 ms and 3 MiB); that it is
  // there is checked now.
  fs.accessSync(OPENAPI_FILE, fs.constants.R_OK);
  SwaggerModule.setup('api/swagger', app, () => builtOpenApiDocument(config), {
    useGlobalPrefix: false,
    jsonDocumentUrl: 'swagger.v1.json',
    raw: ['json'],
  });
}
