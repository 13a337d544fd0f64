import type { Response } from 'supertest';
import type { RepositoryWire } from '../../src/repos/repository.wire';
import { AccessTokensService } from '../../src/users/access-tokens.service';
import { UserEntity } from '../../src/users/user.entity';
import { UsersService } from '../../src/users/users.service';
import { recordSecrets } from './e2e-log';
import type { TestApp } from './test-app';

// Typed records for e2e specs: a user with its password and token (TestUser), an organisation (TestOrg), a
// repository as the API answered its creation (TestRepo), and `as(t, user)`, a small HTTP client that calls the
// API with the user's token and says what type it expects back.

export interface TestUser {
  user: UserEntity;
  name: string;
  password: string;
  email: string;
  /** A token with scope `all`. */
  token: string;
}

let sequence = 0;

/** A unique, valid user name for this test file. */
export function uniqueName(prefix = 'user'): string {
  sequence += 1;
  return `${prefix}${sequence}${Math.random().toString(36).slice(2, 6)}`;
}

export interface MakeUserOptions {
  name?: string;
  admin?: boolean;
  visibility?: 'public' | 'limited' | 'private';
  password?: string;
  email?: string;
  fullName?: string;
  scopes?: string[];
}

/** A ready user (password change not required) with an `all` token (or the scopes asked for). */
export async function makeUser(t: TestApp, options: MakeUserOptions = {}): Promise<TestUser> {
  const name = options.name ?? uniqueName();
  const password = options.password ?? 'correct-horse-battery';
  recordSecrets(password);
  const email = options.email ?? `${name.toLowerCase()}@example.com`;
  const users = t.app.get(UsersService);
  let user = await users.create({
    username: name,
    email,
    password,
    fullName: options.fullName,
    mustChangePassword: false,
    visibility: options.visibility,
  });
  if (options.admin) user = await users.edit(name, { admin: true });
  const token = await makeToken(t, user, options.scopes ?? ['all']);
  return { user, name, password, email, token };
}

export async function makeToken(t: TestApp, user: UserEntity, scopes: string[], name = uniqueName('token')): Promise<string> {
  const created = await t.app.get(AccessTokensService).create(user, name, scopes);
  recordSecrets(created.plaintext);
  return created.plaintext;
}

/** `Authorization: token …` */
export function withToken(token: string): Record<string, string> {
  return { Authorization: `token ${token}` };
}

/** `Authorization: Basic …` */
export function withBasic(username: string, secret: string): Record<string, string> {
  return { Authorization: `Basic ${Buffer.from(`${username}:${secret}`).toString('base64')}` };
}

/** An organisation: its row (the HTTP shape is the organizations e2e's). */
export type TestOrg = UserEntity;

/** A repository as `POST /user/repos` (or `/orgs/{org}/repos`) answered it. */
export type TestRepo = RepositoryWire;

export interface MakeOrgOptions {
  name?: string;
  visibility?: 'public' | 'limited' | 'private';
}

/**
 * An organisation owned by `owner`, inserted directly (the HTTP route is tested in organizations e2e).
 */
export async function makeOrg(t: TestApp, owner: UserEntity, options: MakeOrgOptions = {}): Promise<TestOrg> {
  const { Transactions } = await import('../../src/database/transactions');
  const { UserStore } = await import('../../src/users/user.store');
  const { OrganizationStore } = await import('../../src/users/organization.store');
  const { parseVisibility, UserType } = await import('../../src/users/user.entity');
  const name = options.name ?? uniqueName('org');
  const now = Math.floor(Date.now() / 1000);
  return t.app.get(Transactions).run(async (tx) => {
    const org = await t.app.get(UserStore).insert(tx, {
      name,
      lowerName: name.toLowerCase(),
      type: UserType.Organization,
      visibility: parseVisibility(options.visibility ?? 'public'),
      createdUnix: now,
      updatedUnix: now,
    });
    await t.app.get(OrganizationStore).addOwnersTeam(tx, org.id, owner.id);
    return org;
  });
}

export interface MakeRepoOptions {
  name?: string;
  private?: boolean;
  autoInit?: boolean;
  description?: string;
  /** Create it in this organisation (the token's user must own it). */
  org?: string;
}

/**
 * A repository created over HTTP by `owner` (so its bare git directory exists), returning the `Repository`
 * JSON of the creation answer.
 */
export async function makeRepo(t: TestApp, owner: TestUser, options: MakeRepoOptions = {}): Promise<TestRepo> {
  const path = options.org ? `/orgs/${options.org}/repos` : '/user/repos';
  const response = await t.http
    .post(t.api(path))
    .set(withToken(owner.token))
    .send({
      name: options.name ?? uniqueName('repo'),
      private: options.private ?? false,
      auto_init: options.autoInit ?? false,
      description: options.description ?? '',
    });
  if (response.status !== 201) throw new Error(`makeRepo: ${response.status} ${response.text}`);
  return response.body as TestRepo;
}

/** An answer of the API, its body typed as the caller expects (unchecked: the spec's assertions check it). */
export interface ApiAnswer<T> {
  status: number;
  body: T;
  text: string;
  headers: Record<string, string>;
}

/** Calls under /api/v1 as one user (or anonymously); `path` is the part after /api/v1. */
export interface ApiClient {
  /** The user whose token is sent; null for an anonymous client. */
  readonly user: TestUser | null;
  get<T = unknown>(path: string, query?: Record<string, string | number | boolean>): Promise<ApiAnswer<T>>;
  post<T = unknown>(path: string, body?: object): Promise<ApiAnswer<T>>;
  patch<T = unknown>(path: string, body?: object): Promise<ApiAnswer<T>>;
  put<T = unknown>(path: string, body?: object): Promise<ApiAnswer<T>>;
  delete<T = unknown>(path: string, body?: object): Promise<ApiAnswer<T>>;
}

/** `as(t, alice).get<RepositoryWire>('/repos/alice/tools')`: the API with alice's token; `as(t, null)`: anonymous. */
export function as(t: TestApp, user: TestUser | null): ApiClient {
  const send = async <T>(method: 'get' | 'post' | 'patch' | 'put' | 'delete', path: string, body?: object, query?: object): Promise<ApiAnswer<T>> => {
    let call = t.http[method](t.api(path));
    if (user) call = call.set(withToken(user.token));
    if (query) call = call.query(query);
    const response: Response = body === undefined ? await call : await call.send(body);
    return { status: response.status, body: response.body as T, text: response.text, headers: response.headers as Record<string, string> };
  };
  return {
    user,
    get: (path, query) => send('get', path, undefined, query),
    post: (path, body) => send('post', path, body),
    patch: (path, body) => send('patch', path, body),
    put: (path, body) => send('put', path, body),
    delete: (path, body) => send('delete', path, body),
  };
}
