import type { OpenAPIObject } from '@nestjs/swagger';
import forgejo from '../../openapi/forgejo-operation-ids.json';

/** Forgejo's name for one operation: SDKs generated from either document then have the same methods. */
export interface ForgejoOperation {
  operationId: string;
  tags: string[];
}

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** `GET /repos/{}/{}`: method and path with the parameter names left out, as paths match whatever they are called. */
export function operationKey(method: string, path: string): string {
  return `${method.toUpperCase()} ${path.replace(/\{[^}]+\}/g, '{}')}`;
}

const FORGEJO_OPERATIONS = new Map<string, ForgejoOperation>(
  Object.entries(forgejo.operations as Record<string, ForgejoOperation>).map(([key, operation]) => {
    const [method, path] = key.split(' ');
    return [operationKey(method, path), operation];
  }),
);

/** Forgejo's operation id and tags for a method and path (relative to /api/v1), if Forgejo has that operation. */
export function forgejoOperation(method: string, path: string): ForgejoOperation | undefined {
  return FORGEJO_OPERATIONS.get(operationKey(method, path));
}

/**
 * NestJS names operations `Controller_method`; Anvil names them as Forgejo does wherever Forgejo has the same
 * operation (with Forgejo's tags), and by the handler's name (camelCase) elsewhere.
 */
export function handlerOperationId(_controllerKey: string, methodKey: string): string {
  return methodKey;
}

export function withForgejoOperationIds(document: OpenAPIObject): OpenAPIObject {
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      const known = operation && forgejoOperation(method, path);
      if (!operation || !known) continue;
      operation.operationId = known.operationId;
      operation.tags = [...known.tags];
    }
  }
  return document;
}
