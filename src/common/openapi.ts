import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiResponse, ApiSchema, type OpenAPIObject } from '@nestjs/swagger';

/** The spec's error body. */
@ApiSchema({ name: 'APIError' })
export class ApiErrorWire {
  @ApiProperty({ example: 'token is required' })
  message: string;

  /** The example is replaced by `{ROOT_URL}api/swagger` when the document is built (withErrorExamples). */
  @ApiProperty({ example: 'http://localhost:3000/api/swagger' })
  url: string;
}

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'APIError is error format response (bad request)',
  401: 'APIUnauthorizedError: no or invalid credentials',
  403: 'APIForbiddenError: the caller is not allowed',
  404: 'APINotFound: not found (empty body)',
  405: 'method not allowed',
  409: 'APIConflict: the resource already exists',
  413: 'quota exceeded',
  422: 'APIValidationError: input failed validation',
  429: 'too many requests: see Retry-After',
  500: 'APIError: internal failure',
};

/** Documents the error answers of a route; a 404 is documented without a body, as it is sent. */
export function ApiErrors(...statuses: number[]): MethodDecorator & ClassDecorator {
  return applyDecorators(
    ...statuses.map((status) =>
      status === 404
        ? ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] })
        : ApiResponse({ status, description: ERROR_DESCRIPTIONS[status] ?? 'error', type: ApiErrorWire }),
    ),
  );
}

/** Documents a 204 (or 200) answer with no body. */
export function ApiEmpty(status = 204, description = 'APIEmpty is an empty response'): MethodDecorator {
  return ApiResponse({ status, description });
}

/** A typical message per error status, as Anvil sends it, for the examples in the document. */
export const ERROR_EXAMPLE_MESSAGES: Record<number, string> = {
  400: "invalid JSON body: Expected property name or '}' in JSON at position 1",
  401: 'token is required',
  403: 'token does not have at least one of required scope(s): [write:repository]',
  405: 'method not allowed',
  409: 'The repository with the same name already exists.',
  413: 'quota exceeded',
  422: '[Name]: AlphaDashDot',
  // A 500 names its cause to site admins only.
  500: '',
};

/**
 * Error examples that name this server: the `url` of every APIError example is `{ROOT_URL}api/swagger`, and each
 * documented error status gets its own example message (a 403 does not repeat the 401 text).
 */
export function withErrorExamples(document: OpenAPIObject, rootUrl: string): OpenAPIObject {
  const url = `${rootUrl}api/swagger`;
  const schema = document.components?.schemas?.APIError as { properties?: Record<string, { example?: unknown }> } | undefined;
  if (schema?.properties?.url) schema.properties.url.example = url;
  for (const item of Object.values(document.paths)) {
    for (const operation of Object.values(item)) {
      const responses = (operation as { responses?: Record<string, { content?: Record<string, { schema?: { $ref?: string }; example?: unknown }> }> })
        .responses;
      for (const [status, response] of Object.entries(responses ?? {})) {
        const json = response.content?.['application/json'];
        const message = ERROR_EXAMPLE_MESSAGES[Number(status)];
        if (json?.schema?.$ref === '#/components/schemas/APIError' && message !== undefined) json.example = { message, url };
      }
    }
  }
  return document;
}
