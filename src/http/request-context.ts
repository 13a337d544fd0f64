import type { AuthContext } from '../auth/auth-context';

// Why: what the platform hangs on a request (caller, raw body) is typed in one place.

declare module 'express-serve-static-core' {
  interface Request {
    /** Who is calling; set by the authentication middleware on every request. */
    auth?: AuthContext;
    /** The client's address, behind trusted proxies too; set first of all (http/client-address.ts). */
    clientIp?: string;
    /** The request body as received, read once, after routing and the auth guard, by BodyGuard. */
    rawBody?: Buffer;
  }
}

export {};
