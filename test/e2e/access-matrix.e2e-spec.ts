import * as fs from 'node:fs';
import * as path from 'node:path';
import { SshEndpoint } from '../../src/common/ssh-endpoint';
import { UsersService } from '../../src/users/users.service';
import { makeOrg, makeRepo, makeToken, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { GitClient, withCredentials } from '../support/git-client';
import { generateSshKey, sshCommand, SshKeyFiles } from '../support/ssh-keys';
import { startTestApp, TestApp, WITH_SSH } from '../support/test-app';

/**
 * The access matrix: for every kind of caller, what it may see and do to a private and a public repository of
 * a public organisation, over the REST API, git over HTTP and git over SSH, each answer a real request. The
 * expected answers are the table below, written from Forgejo's permission rules:
 *
 * - anonymous callers read public repositories of public owners, nothing else;
 * - site admins and the owner own everything; so do members of the Owners team and of any team with `admin`
 *   (Forgejo gives an admin team the owner's mode);
 * - a collaborator has its mode on every unit;
 * - other team members have, per unit, the highest mode of their teams that name the unit; on a public
 *   repository an unrestricted user reads every unit no team of theirs names;
 * - an organisation member reaching the repository through no team reads public repositories only;
 * - a restricted user reaches only what teams and collaborations give (not even public repositories of an
 *   organisation they are not a member of);
 * - a public-only token is refused (403) on private repositories and acts as its user on public ones;
 * - a deploy key reads (read-only) or writes (read-write) exactly its repositories over SSH, nothing else;
 * - git over HTTP serves a public repository of a public owner to anyone without asking who they are, so a
 *   restricted user clones it there as an anonymous caller would (over SSH, where the key says who they are,
 *   they are refused as Forgejo does).
 *
 * Status rules, as Forgejo's: a repository the caller cannot see is 404 on every route; a route of a unit the
 * caller cannot read is 404; a write without the permission is 401 for anonymous callers, else 403; settings and
 * collaborators need admin, deletion the owner's mode.
 */

type Mode = 0 | 1 | 2;
const [NONE, READ, WRITE] = [0, 1, 2] as const;

/** What a caller has on one repository: the code and releases units, admin (settings), owner (deletion). */
interface Grant {
  code: Mode;
  releases: Mode;
  admin: boolean;
  owner: boolean;
}

const nothing: Grant = { code: NONE, releases: NONE, admin: false, owner: false };
const reader: Grant = { code: READ, releases: READ, admin: false, owner: false };
const writer: Grant = { code: WRITE, releases: WRITE, admin: false, owner: false };
const administrator: Grant = { code: WRITE, releases: WRITE, admin: true, owner: false };
const owner: Grant = { code: WRITE, releases: WRITE, admin: true, owner: true };

type Kind = 'user' | 'anonymous' | 'public-only token' | 'deploy key';

interface Role {
  kind: Kind;
  private: Grant | 'public-only refused';
  public: Grant;
}

const TABLE = {
  owner: { kind: 'user', private: owner, public: owner },
  'site admin': { kind: 'user', private: owner, public: owner },
  'Owners team member': { kind: 'user', private: owner, public: owner },
  'team member (read)': { kind: 'user', private: reader, public: reader },
  'team member (write)': { kind: 'user', private: writer, public: writer },
  'team member (admin)': { kind: 'user', private: owner, public: owner },
  // A team with write on releases only: the code unit is the public default (read) on a public repository only.
  'team member (no repo.code)': {
    kind: 'user',
    private: { code: NONE, releases: WRITE, admin: false, owner: false },
    public: { code: READ, releases: WRITE, admin: false, owner: false },
  },
  'collaborator (read)': { kind: 'user', private: reader, public: reader },
  'collaborator (write)': { kind: 'user', private: writer, public: writer },
  'collaborator (admin)': { kind: 'user', private: administrator, public: administrator },
  'organisation member without a team': { kind: 'user', private: nothing, public: reader },
  'restricted user': { kind: 'user', private: nothing, public: nothing },
  anonymous: { kind: 'anonymous', private: nothing, public: reader },
  "owner's public-only token": { kind: 'public-only token', private: 'public-only refused', public: owner },
  'deploy key (read-only)': { kind: 'deploy key', private: reader, public: reader },
  'deploy key (read-write)': { kind: 'deploy key', private: writer, public: writer },
} satisfies Record<string, Role>;

type RoleName = keyof typeof TABLE;
type Visibility = 'private' | 'public';

/** Every answer of one row: REST statuses, the permissions object, list visibility, git outcomes. */
interface Answers {
  get?: number;
  permissions?: { admin: boolean; push: boolean; pull: boolean } | null;
  searched?: boolean;
  orgListed?: boolean;
  /** The permissions object of the repository in the search and in the organisation's list (as GET's). */
  searchedPermissions?: { admin: boolean; push: boolean; pull: boolean } | null;
  orgListedPermissions?: { admin: boolean; push: boolean; pull: boolean } | null;
  contentsWrite?: number;
  branchCreate?: number;
  releaseCreate?: number;
  settingsEdit?: number;
  collaboratorAdd?: number;
  delete?: number;
  httpClone?: boolean;
  httpPush?: boolean;
  sshClone?: boolean;
  sshPush?: boolean;
}

/** The answers Forgejo's rules give for a row of the table. */
function expectedAnswers(role: Role, visibility: Visibility): Answers {
  const cell = role[visibility];
  const rest = role.kind !== 'deploy key';
  const ssh = role.kind === 'user' || role.kind === 'deploy key';
  const answers: Answers = {};
  if (cell === 'public-only refused') {
    return {
      get: 403,
      permissions: null,
      searched: false,
      orgListed: false,
      searchedPermissions: null,
      orgListedPermissions: null,
      contentsWrite: 403,
      branchCreate: 403,
      releaseCreate: 403,
      settingsEdit: 403,
      collaboratorAdd: 403,
      delete: 403,
      httpClone: false,
      httpPush: false,
    };
  }
  const sees = cell.code >= READ || cell.releases >= READ;
  const anonymous = role.kind === 'anonymous';
  // A caller who sees the repository but not the unit is refused with 403, as Forgejo's unit check answers.
  const write = (mode: Mode, ok: number) => (!sees ? 404 : mode < WRITE ? (anonymous ? 401 : 403) : ok);
  const needs = (allowed: boolean, ok: number) => (!sees ? 404 : anonymous ? 401 : allowed ? ok : 403);
  if (rest) {
    Object.assign(answers, {
      get: sees ? 200 : 404,
      permissions: sees ? { admin: cell.admin, push: cell.code >= WRITE, pull: cell.code >= READ } : null,
      searched: sees,
      orgListed: sees,
      searchedPermissions: sees ? { admin: cell.admin, push: cell.code >= WRITE, pull: cell.code >= READ } : null,
      orgListedPermissions: sees ? { admin: cell.admin, push: cell.code >= WRITE, pull: cell.code >= READ } : null,
      contentsWrite: write(cell.code, 201),
      branchCreate: write(cell.code, 201),
      releaseCreate: write(cell.releases, 201),
      settingsEdit: needs(cell.admin, 200),
      collaboratorAdd: needs(cell.admin, 204),
      delete: needs(cell.owner, 204),
      // Git over HTTP serves a public repository of a public owner to anyone without asking who they are (as
      // Forgejo), so even a restricted user clones it there, as they could anonymously.
      httpClone: cell.code >= READ || visibility === 'public',
      httpPush: cell.code >= WRITE,
    });
  }
  if (ssh) Object.assign(answers, { sshClone: cell.code >= READ, sshPush: cell.code >= WRITE });
  return answers;
}

describe('the access matrix: every kind of caller, every door (REST, git over HTTP, git over SSH)', () => {
  let t: TestApp;
  let client: GitClient;
  let baseUrl: string;
  let sshPort: number;
  let org: string;
  let work: string;
  let dummy: TestUser;
  /** Who acts as each role: a user (token, SSH key), a token, a deploy key, or nobody. */
  const actors = new Map<RoleName, { user?: TestUser; token?: string; key?: SshKeyFiles }>();
  const repos: Record<Visibility, string> = { private: '', public: '' };
  const standIns: Record<Visibility, string | undefined> = { private: undefined, public: undefined };
  let teamIds: number[] = [];
  let creator: TestUser;

  const auth = (role: RoleName) => {
    const token = actors.get(role)?.token;
    return token ? withToken(token) : {};
  };

  /** Links the repository to the role's teams and adds its collaborators and deploy keys, as for the fixtures. */
  async function grant(full: string): Promise<void> {
    const as = withToken(creator.token);
    for (const id of teamIds)
      await t.http
        .put(t.api(`/teams/${id}/repos/${full}`))
        .set(as)
        .expect(204);
    for (const [role, permission] of [
      ['collaborator (read)', 'read'],
      ['collaborator (write)', 'write'],
      ['collaborator (admin)', 'admin'],
    ] as const) {
      await t.http
        .put(t.api(`/repos/${full}/collaborators/${actors.get(role)!.user!.name}`))
        .set(as)
        .send({ permission })
        .expect(204);
    }
    for (const [role, readOnly] of [
      ['deploy key (read-only)', true],
      ['deploy key (read-write)', false],
    ] as const) {
      await t.http
        .post(t.api(`/repos/${full}/keys`))
        .set(as)
        .send({ title: role, key: actors.get(role)!.key!.publicLine, read_only: readOnly })
        .expect(201);
    }
  }

  async function makeOrgRepo(visibility: Visibility): Promise<string> {
    const name = uniqueName(`matrix-${visibility}`);
    await makeRepo(t, creator, { org, name, private: visibility === 'private', autoInit: true });
    const full = `${org}/${name}`;
    await grant(full);
    return full;
  }

  async function gitOk(args: string[], env: Record<string, string> = {}): Promise<boolean> {
    return (await client.run(args, { cwd: work, env })).code === 0;
  }

  async function observe(name: RoleName, visibility: Visibility): Promise<Answers> {
    const role: Role = TABLE[name];
    const actor = actors.get(name) ?? {};
    const full = repos[visibility];
    const as = auth(name);
    const api = (suffix: string) => t.api(`/repos/${full}${suffix}`);
    const answers: Answers = {};
    if (role.kind !== 'deploy key') {
      const got = await t.http.get(api('')).set(as);
      answers.get = got.status;
      answers.permissions = got.status === 200 ? got.body.permissions : null;
      const searched = await t.http.get(t.api('/repos/search')).query({ q: 'matrix', limit: 50 }).set(as);
      const found = (searched.body.data ?? []).find((repo: { full_name: string }) => repo.full_name === full);
      answers.searched = found !== undefined;
      answers.searchedPermissions = found?.permissions ?? null;
      const listed = await t.http
        .get(t.api(`/orgs/${org}/repos`))
        .query({ limit: 50 })
        .set(as);
      const inList = (Array.isArray(listed.body) ? listed.body : []).find((repo: { full_name: string }) => repo.full_name === full);
      answers.orgListed = inList !== undefined;
      answers.orgListedPermissions = inList?.permissions ?? null;
      const file = uniqueName('file');
      answers.contentsWrite = (
        await t.http
          .post(api(`/contents/${file}.txt`))
          .set(as)
          .send({ content: Buffer.from('x\n').toString('base64'), message: 'matrix' })
      ).status;
      answers.branchCreate = (
        await t.http
          .post(api('/branches'))
          .set(as)
          .send({ new_branch_name: uniqueName('b'), old_branch_name: 'main' })
      ).status;
      answers.releaseCreate = (
        await t.http
          .post(api('/releases'))
          .set(as)
          .send({ tag_name: uniqueName('v'), target_commitish: 'main' })
      ).status;
      answers.settingsEdit = (
        await t.http
          .patch(api(''))
          .set(as)
          .send({ description: `edited by ${name}` })
      ).status;
      answers.collaboratorAdd = (
        await t.http
          .put(api(`/collaborators/${dummy.name}`))
          .set(as)
          .send({ permission: 'read' })
      ).status;
      // Deletion is tried on a stand-in with the same grants, replaced once deleted: the fixture stays whatever
      // the answer.
      const doomed = (standIns[visibility] ??= await makeOrgRepo(visibility));
      answers.delete = (await t.http.delete(t.api(`/repos/${doomed}`)).set(as)).status;
      if (answers.delete === 204) standIns[visibility] = undefined;
      const user = actor.user?.name ?? 'x';
      const url = actor.token ? withCredentials(baseUrl, `${full}.git`, user, actor.token) : `${baseUrl}/${full}.git`;
      answers.httpClone = await gitOk(['clone', '--quiet', '--bare', url, path.join(client.home, uniqueName('http-clone'))]);
      answers.httpPush = await gitOk(['push', '--quiet', url, `HEAD:refs/heads/${uniqueName('http')}`]);
    }
    if (actor.key) {
      const url = `ssh://git@127.0.0.1:${sshPort}/${full}.git`;
      const env = { GIT_SSH_COMMAND: sshCommand(actor.key.privateKey) };
      answers.sshClone = await gitOk(['clone', '--quiet', '--bare', url, path.join(client.home, uniqueName('ssh-clone'))], env);
      answers.sshPush = await gitOk(['push', '--quiet', url, `HEAD:refs/heads/${uniqueName('ssh')}`], env);
    }
    return answers;
  }

  beforeAll(async () => {
    t = await startTestApp(WITH_SSH);
    baseUrl = (await t.listen()).replace(/\/$/, '');
    sshPort = t.app.get(SshEndpoint).port;
    client = new GitClient();
    work = await client.workingCopy('main', { 'matrix.txt': 'pushed by the access matrix\n' });
    const userRoles = (Object.keys(TABLE) as RoleName[]).filter((name) => TABLE[name].kind === 'user');
    for (const name of userRoles) {
      const user = await makeUser(t, { admin: name === 'site admin' });
      const key = generateSshKey(client.home, uniqueName('key'));
      await t.http.post(t.api('/user/keys')).set(withToken(user.token)).send({ title: 'matrix', key: key.publicLine }).expect(201);
      actors.set(name, { user, token: user.token, key });
    }
    await t.app.get(UsersService).edit(actors.get('restricted user')!.user!.name, { restricted: true });
    creator = actors.get('owner')!.user!;
    actors.set("owner's public-only token", { user: creator, token: await makeToken(t, creator.user, ['public-only', 'all']) });
    actors.set('deploy key (read-only)', { key: generateSshKey(client.home, uniqueName('deploy-ro')) });
    actors.set('deploy key (read-write)', { key: generateSshKey(client.home, uniqueName('deploy-rw')) });
    dummy = await makeUser(t);
    org = (await makeOrg(t, creator.user)).name;
    const as = withToken(creator.token);
    const teams = (
      await t.http
        .get(t.api(`/orgs/${org}/teams`))
        .set(as)
        .expect(200)
    ).body as { id: number; name: string }[];
    const ownersTeam = teams.find((team) => team.name === 'Owners')!.id;
    await t.http
      .put(t.api(`/teams/${ownersTeam}/members/${actors.get('Owners team member')!.user!.name}`))
      .set(as)
      .expect(204);
    const makeTeam = async (body: Record<string, unknown>, member: RoleName) => {
      const team = await t.http
        .post(t.api(`/orgs/${org}/teams`))
        .set(as)
        .send({ name: uniqueName('team'), ...body })
        .expect(201);
      await t.http
        .put(t.api(`/teams/${team.body.id}/members/${actors.get(member)!.user!.name}`))
        .set(as)
        .expect(204);
      return team.body.id as number;
    };
    const units = ['repo.code', 'repo.releases', 'repo.issues'];
    teamIds = [
      await makeTeam({ permission: 'read', units }, 'team member (read)'),
      await makeTeam({ permission: 'write', units }, 'team member (write)'),
      await makeTeam({ permission: 'admin', units }, 'team member (admin)'),
      await makeTeam({ permission: 'write', units: ['repo.releases'] }, 'team member (no repo.code)'),
    ];
    // A member of the organisation whose only team reaches no repository.
    await makeTeam({ permission: 'read', units }, 'organisation member without a team');
    repos.private = await makeOrgRepo('private');
    repos.public = await makeOrgRepo('public');
  });

  afterAll(async () => {
    client?.dispose();
    await t?.close();
  });

  for (const visibility of ['private', 'public'] as const) {
    describe(`a ${visibility} repository of an organisation`, () => {
      for (const name of Object.keys(TABLE) as RoleName[]) {
        it(`${name}: ${describeRow(TABLE[name], visibility)}`, async () => {
          expect(await observe(name, visibility)).toEqual(expectedAnswers(TABLE[name], visibility));
        });
      }
    });
  }

  it('the fixtures were shared: one organisation, two repositories, each granted to every role', () => {
    expect(fs.existsSync(work)).toBe(true);
    expect(repos.private).not.toBe(repos.public);
    expect(teamIds).toHaveLength(4);
  });
});

function describeRow(role: Role, visibility: Visibility): string {
  const cell = role[visibility];
  if (cell === 'public-only refused') return 'refused (403)';
  const modes = ['none', 'read', 'write'];
  return `code ${modes[cell.code]}, releases ${modes[cell.releases]}${cell.owner ? ', owner' : cell.admin ? ', admin' : ''}`;
}
