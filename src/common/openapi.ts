import { applyDecorators } from '@nestjs/common';
import { ApiProperty, ApiResponse, ApiSchema } from '@nestjs/swagger';

/** The spec's error body. */
@ApiSchema({ name: 'APIError' })
export class ApiErrorWire {
  @ApiProperty({ example: 'token is required' })
  message: string;

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
