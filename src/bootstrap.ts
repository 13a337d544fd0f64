import 'reflect-metadata';
import type { Server } from 'node:http';
import './common/request-context';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { DataSource } from 'typeorm';
import { AppModule } from './app.module';
import { corsOptions } from './common/cors';
import { withErrorExamples } from './common/openapi';
import { handlerOperationId, withForgejoOperationIds } from './common/operation-ids';
import { GitHttpHandler } from './git-http/git-http.handler';
import { PAGING_LIMITS } from './common/paging';
import { expectContinueOnlyForTrustedUploads, OUTSIDE_API_ROUTES } from './blobs/upload-body';
import type { AppConfig } from './config/config';
import { secureDataDirectory } from './server/data-directory';
import { applyHttpServerSettings } from './server/http-server-settings';
import { MarkdownRenderer } from './markdown/markdown-renderer';
import { AppMetrics } from './metrics/metrics';
import { PAGE_PATHS } from './pages/pages.module';
import { QuietStartLogger } from './server/quiet-start-logger';

export const API_PREFIX = 'api/v1';

/** Builds the application exactly as it serves: main.ts and the e2e tests both start here. */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
  secureDataDirectory(config.dataDir);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    bufferLogs: true,
    // Until the application logger takes over, Nest stays quiet, and a failure is thrown for the caller to
    // word (server/serve.ts) instead of Nest's stack trace and process.exit.
    logger: false,
    abortOnError: false,
  });
  app.useLogger(new QuietStartLogger(app.get(Logger)));
  // Metrics count every request, git's too (their route label is `unmatched`: they are not API routes).
  if (config.metrics.enabled) mountMetrics(app, config.metrics.token);
  // Git routes come first: they stream and must meet none of the API's middleware (body parser and its limit).
  app.use(app.get(GitHttpHandler).middleware());
  expectContinueOnlyForTrustedUploads(app.getHttpServer() as Server);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set(PAGING_LIMITS, config.paging);
  app.setGlobalPrefix(API_PREFIX, { exclude: ['api/healthz', ':username.keys', ':username.gpg', ...OUTSIDE_API_ROUTES, ...PAGE_PATHS] });
  app.enableCors(corsOptions(config.corsAllowedOrigins));
  applyHttpServerSettings(app.getHttpServer(), config.http);
  setUpOpenApi(app, config);
  await app.init();
  return app;
}

/**
 * METRICS_ENABLED: counting starts before any other handler, and GET /metrics is answered ahead of the API's
 * authentication (Prometheus sends METRICS_TOKEN as its bearer token, which is not an API token).
 */
function mountMetrics(app: NestExpressApplication, token: string | undefined): void {
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
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Authorization', description: 'API tokens must be prepended with "token" followed by a space.' }, 'AuthorizationHeaderToken')
    .addApiKey({ type: 'apiKey', in: 'query', name: 'token', description: 'This authentication option is deprecated for removal in Gitea 1.23. Please use AuthorizationHeaderToken instead.' }, 'Token')
    .addApiKey({ type: 'apiKey', in: 'query', name: 'access_token', description: 'This authentication option is deprecated for removal in Gitea 1.23. Please use AuthorizationHeaderToken instead.' }, 'AccessToken')
    .addApiKey({ type: 'apiKey', in: 'query', name: 'sudo', description: 'Sudo API request as the user provided as the key. Admin privileges are required.' }, 'SudoParam')
    .addApiKey({ type: 'apiKey', in: 'header', name: 'Sudo', description: 'Sudo API request as the user provided as the key. Admin privileges are required.' }, 'SudoHeader')
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

function setUpOpenApi(app: NestExpressApplication, config: AppConfig): void {
  const document = openApiDocument(app, config);
  SwaggerModule.setup('api/swagger', app, document, {
    useGlobalPrefix: false,
    jsonDocumentUrl: 'swagger.v1.json',
    raw: ['json'],
  });
}
