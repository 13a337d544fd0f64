import 'reflect-metadata';
import type { Server } from 'node:http';
import './common/request-context';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';
import { Logger } from 'nestjs-pino';
import { AppModule } from './app.module';
import { GitHttpHandler } from './git-http/git-http.handler';
import { PAGING_LIMITS } from './common/paging';
import { expectContinueOnlyForTrustedUploads, OUTSIDE_API_ROUTES } from './blobs/upload-body';
import type { AppConfig } from './config/config';
import { secureDataDirectory } from './server/data-directory';
import { applyHttpServerSettings } from './server/http-server-settings';

export const API_PREFIX = 'api/v1';

/** Builds the application exactly as it serves: main.ts and the e2e tests both start here. */
export async function createApp(config: AppConfig): Promise<NestExpressApplication> {
  secureDataDirectory(config.dataDir);
  const app = await NestFactory.create<NestExpressApplication>(AppModule.forRoot(config), {
    bodyParser: false,
    bufferLogs: true,
  });
  app.useLogger(app.get(Logger));
  // Git routes come first: they stream and must meet none of the API's middleware (body parser and its limit).
  app.use(app.get(GitHttpHandler).middleware());
  expectContinueOnlyForTrustedUploads(app.getHttpServer() as Server);
  app.disable('x-powered-by');
  app.set('etag', false);
  app.set(PAGING_LIMITS, config.paging);
  app.setGlobalPrefix(API_PREFIX, { exclude: ['api/healthz', ':username.keys', ':username.gpg', ...OUTSIDE_API_ROUTES] });
  app.enableShutdownHooks();
  applyHttpServerSettings(app.getHttpServer(), config.http);
  setUpOpenApi(app, config);
  await app.init();
  return app;
}

export function openApiDocument(app: NestExpressApplication, config: AppConfig) {
  const builder = new DocumentBuilder()
    .setTitle('Anvil API')
    .setDescription('This documentation describes the Anvil API (Forgejo/Gitea compatible).')
    .setVersion('1.1.1')
    .setLicense('MIT', 'http://opensource.org/licenses/MIT')
    .addServer(`${config.rootUrl}api/v1`)
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
  const document = SwaggerModule.createDocument(app, builder.build(), { ignoreGlobalPrefix: false });
  // Paths are documented relative to the /api/v1 base path, as Forgejo's swagger does.
  document.paths = Object.fromEntries(
    Object.entries(document.paths)
      .filter(([path]) => path.startsWith(`/${API_PREFIX}/`))
      .map(([path, item]) => [path.slice(API_PREFIX.length + 1), item]),
  );
  return document;
}

function setUpOpenApi(app: NestExpressApplication, config: AppConfig): void {
  const document = openApiDocument(app, config);
  SwaggerModule.setup('api/swagger', app, document, {
    useGlobalPrefix: false,
    jsonDocumentUrl: 'swagger.v1.json',
    raw: ['json'],
  });
}
