import type { CorsOptions } from '@nestjs/common/interfaces/external/cors-options.interface';

// Why: the CORS rules (who, which headers) are stated once, for the front door.

/** Request headers a browser may send cross-origin: the credentials Forgejo clients use, and `Sudo`. */
export const CORS_ALLOWED_HEADERS = ['Authorization', 'Sudo', 'Content-Type', 'Accept', 'X-Requested-With', 'X-Gitea-OTP', 'X-Forgejo-OTP'];

/** Response headers a browser script may read: paging and deprecation warnings. */
export const CORS_EXPOSED_HEADERS = ['Link', 'X-Total-Count', 'Warning'];

export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/**
 * CORS_ALLOWED_ORIGINS as options for the `cors` middleware. Preflights are always answered (204), but only an
 * allowed origin gets `Access-Control-Allow-Origin`. Credentials (cookies) are never allowed cross-origin:
 * API clients send `Authorization`, and a wildcard must never carry credentials.
 */
export function corsOptions(allowedOrigins: readonly string[]): CorsOptions {
  return {
    origin: allowedOrigins.includes('*') ? '*' : [...allowedOrigins],
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    credentials: false,
    maxAge: 600,
    preflightContinue: false,
    optionsSuccessStatus: 204,
  };
}
