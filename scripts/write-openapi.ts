/**
 * Builds the OpenAPI document from the routes and writes it to openapi/swagger.v1.json, which the server
 * serves (build time, not start-up), so that API changes show in review.
 * `npm run openapi` after changing a route; test/e2e/openapi.e2e-spec.ts fails while the file is stale.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { openApiDocument } from '../src/bootstrap';
import { startTestApp } from '../test/support/test-app';

export const OPENAPI_FILE = path.join(__dirname, '..', 'openapi', 'swagger.v1.json');

async function main(): Promise<void> {
  const t = await startTestApp();
  try {
    const document = openApiDocument(t.app, t.config);
    fs.writeFileSync(OPENAPI_FILE, `${JSON.stringify(document, null, 2)}\n`);
    console.log(`wrote ${path.relative(process.cwd(), OPENAPI_FILE)}`);
  } finally {
    await t.close();
  }
}

void main();
