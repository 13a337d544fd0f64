import { randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Readable } from 'node:stream';
import { runCli } from '../../src/cli/cli';
import { loadConfig } from '../../src/config/config';
import { withBasic, withToken } from '../support/factories';
import { createMysqlDatabase, startTestApp, TestApp, usesMysql } from '../support/test-app';

/**
 * The bootstrap CLI on a fresh data directory, then the server on the same database: the
 * admin it created can create users and tokens over the API.
 */
describe('admin CLI', () => {
  let t: TestApp;
  let env: Record<string, string>;

  beforeAll(async () => {
    // The app creates (and migrates) the database; the CLI must also work on a fresh directory, checked below.
    t = await startTestApp();
    env = { DATA_DIR: t.dataDir, ROOT_URL: t.config.rootUrl, LOG_LEVEL: 'silent' };
    if (t.config.database.type === 'mysql') {
      const db = t.config.database;
      env.DATABASE_URL = `mysql://${db.username}:${db.password}@${db.host}:${db.port}/${db.database}`;
    }
  });
  afterAll(() => t.close());

  async function cli(args: string[], cliEnv = env, stdin: Readable = Readable.from([])) {
    const out: string[] = [];
    const err: string[] = [];
    const code = await runCli(args, loadConfig(cliEnv), { out: (line) => out.push(line), err: (line) => err.push(line) }, stdin);
    return { code, out, err };
  }

  it('creates the first admin with a token printed as the last line, usable over the API', async () => {
    const result = await cli([
      'admin',
      'user',
      'create',
      '--username',
      'root',
      '--password',
      'root-password',
      '--email',
      'root@example.com',
      '--admin',
      '--access-token',
    ]);
    expect(result.code).toBe(0);
    expect(result.out[0]).toBe("New user 'root' has been successfully created!");
    const token = result.out.at(-1)!;
    expect(token).toMatch(/^[0-9a-f]{40}$/);

    const me = await t.http.get(t.api('/user')).set(withToken(token)).expect(200);
    expect(me.body).toMatchObject({ login: 'root', is_admin: true, email: 'root@example.com' });

    const created = await t.http
      .post(t.api('/admin/users'))
      .set(withToken(token))
      .send({ username: 'dev', email: 'dev@example.com', password: 'dev-password', must_change_password: false })
      .expect(201);
    expect(created.body.login).toBe('dev');
    const devToken = await t.http
      .post(t.api('/users/dev/tokens'))
      .set(withBasic('dev', 'dev-password'))
      .send({ name: 'laptop', scopes: ['all'] })
      .expect(201);
    await t.http.get(t.api('/user')).set(withToken(devToken.body.sha1)).expect(200);

    const tokens = await t.http.get(t.api('/users/root/tokens')).set(withToken(token)).expect(200);
    expect(tokens.body[0]).toMatchObject({ name: 'gitea-admin', scopes: ['all'] });
  });

  it('makes later users change their password by default, unless told otherwise', async () => {
    expect((await cli(['admin', 'user', 'create', '--username', 'second', '--password', 'second-password', '--email', 'second@example.com'])).code).toBe(0);
    await t.http.get(t.api('/user')).set(withBasic('second', 'second-password')).expect(403);
    const third = [
      'admin',
      'user',
      'create',
      '--username',
      'third',
      '--password',
      'third-password',
      '--email',
      'third@example.com',
      '--must-change-password=false',
    ];
    expect((await cli(third)).code).toBe(0);
    await t.http.get(t.api('/user')).set(withBasic('third', 'third-password')).expect(200);
  });

  it.each([
    [['admin', 'user', 'create', '--username', 'root', '--password', 'another-pass', '--email', 'other@example.com'], 'user already exists [name: root]'],
    [['admin', 'user', 'create', '--username', 'x y', '--password', 'another-pass', '--email', 'xy@example.com'], '[Username]: Username'],
    [['admin', 'user', 'create', '--username', 'shorty', '--password', 'short', '--email', 'shorty@example.com'], 'PasswordIsRequired'],
  ])('exits non-zero with the reason on stderr for %j', async (args, reason) => {
    const result = await cli(args);
    expect(result.code).not.toBe(0);
    expect(result.err.join('\n')).toContain(reason);
  });

  it.each([[['admin', 'user', 'create', '--username', 'nobody']], [['admin', 'frobnicate']], [['--must-change-password=maybe']]])(
    'prints usage and exits non-zero for bad arguments %j',
    async (args) => {
      const result = await cli(args);
      expect(result.code).not.toBe(0);
      expect(result.err.join('\n')).toMatch(/error|Usage/);
    },
  );

  describe('password sources', () => {
    it('--random-password prints the generated password once, and it works', async () => {
      const result = await cli([
        'admin',
        'user',
        'create',
        '--username',
        'randy',
        '--email',
        'randy@example.com',
        '--random-password',
        '--must-change-password=false',
      ]);
      expect(result.code).toBe(0);
      const printed = result.out.filter((line) => line.startsWith('generated random password is '));
      expect(printed).toHaveLength(1);
      const password = /'(.+)'$/.exec(printed[0])![1];
      expect(password.length).toBeGreaterThanOrEqual(20);
      await t.http.get(t.api('/user')).set(withBasic('randy', password)).expect(200);
    });

    it('--password-stdin reads the first line of standard input and never prints it', async () => {
      const result = await cli(
        ['admin', 'user', 'create', '--username', 'piped', '--email', 'piped@example.com', '--password-stdin', '--must-change-password=false'],
        env,
        Readable.from(['from-stdin-secret\nignored second line\n']),
      );
      expect(result.code).toBe(0);
      expect([...result.out, ...result.err].join('\n')).not.toContain('from-stdin-secret');
      await t.http.get(t.api('/user')).set(withBasic('piped', 'from-stdin-secret')).expect(200);
    });

    it.each([
      [['--password', 'one-password', '--random-password'], 'give exactly one of --password, --password-stdin and --random-password'],
      [[], 'give exactly one of --password, --password-stdin and --random-password'],
      [['--password-stdin'], '--password-stdin: standard input held no password'],
    ])('refuses %j with a usage error (exit 2)', async (flags, message) => {
      const result = await cli(['admin', 'user', 'create', '--username', 'nopass', '--email', 'nopass@example.com', ...flags]);
      expect(result.code).toBe(2);
      expect(result.err).toEqual([`error: ${message}`]);
    });
  });

  it('admin user list shows every account with its flags, --admin only administrators', async () => {
    const all = await cli(['admin', 'user', 'list']);
    expect(all.code).toBe(0);
    expect(all.out[0].split(/\s+/)).toEqual(['ID', 'Username', 'Email', 'IsActive', 'IsAdmin', 'MustChangePassword']);
    const row = (name: string) => all.out.find((line) => line.split(/\s+/)[1] === name)?.split(/\s+/);
    expect(row('root')?.slice(2)).toEqual(['root@example.com', 'true', 'true', 'false']);
    expect(row('second')?.slice(2)).toEqual(['second@example.com', 'true', 'false', 'true']);
    const admins = await cli(['admin', 'user', 'list', '--admin']);
    expect(admins.out.slice(1).map((line) => line.split(/\s+/)[1])).toEqual(['root']);
  });

  it('admin user change-password sets the password and, with --must-change-password=false, lets the user in', async () => {
    await cli(['admin', 'user', 'create', '--username', 'changer', '--password', 'first-password', '--email', 'changer@example.com']);
    await t.http.get(t.api('/user')).set(withBasic('changer', 'first-password')).expect(403);
    const changed = await cli(
      ['admin', 'user', 'change-password', '--username', 'changer', '--password-stdin', '--must-change-password=false'],
      env,
      Readable.from(['second-password\n']),
    );
    expect(changed).toMatchObject({ code: 0, out: ["changer's password has been successfully updated!"] });
    await t.http.get(t.api('/user')).set(withBasic('changer', 'first-password')).expect(401);
    await t.http.get(t.api('/user')).set(withBasic('changer', 'second-password')).expect(200);
    const again = await cli(['admin', 'user', 'change-password', '--username', 'changer', '--password', 'third-password']);
    expect(again.code).toBe(0);
    await t.http.get(t.api('/user')).set(withBasic('changer', 'third-password')).expect(403);
    const unknown = await cli(['admin', 'user', 'change-password', '--username', 'no-such-user', '--password', 'whatever-pass']);
    expect(unknown.code).toBe(1);
    const short = await cli(['admin', 'user', 'change-password', '--username', 'changer', '--password', 'short']);
    expect(short).toMatchObject({ code: 1, err: ['error: password must be at least 8 characters'] });
  });

  it('admin user delete removes the account and what hangs on it (its tokens), and refuses the last admin', async () => {
    const created = await cli([
      'admin',
      'user',
      'create',
      '--username',
      'leaver',
      '--password',
      'leaver-password',
      '--email',
      'leaver@example.com',
      '--must-change-password=false',
      '--access-token',
    ]);
    const token = created.out.at(-1)!;
    await t.http.get(t.api('/user')).set(withToken(token)).expect(200);
    expect(await cli(['admin', 'user', 'delete', '--username', 'leaver'])).toMatchObject({ code: 0, out: ["User 'leaver' has been deleted."] });
    await t.http.get(t.api('/users/leaver')).expect(404);
    await t.http.get(t.api('/user')).set(withToken(token)).expect(401);
    expect(await cli(['admin', 'user', 'delete', '--username', 'leaver'])).toMatchObject({ code: 1, err: ['error: user does not exist'] });
    const lastAdmin = await cli(['admin', 'user', 'delete', '--username', 'root']);
    expect(lastAdmin.code).toBe(1);
    expect(lastAdmin.err[0]).toMatch(/^error: can not delete the last admin user/);
  });

  it('works on a fresh data directory and an empty database (it migrates first)', async () => {
    const fresh = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-cli-'));
    const database = usesMysql() ? await createMysqlDatabase() : undefined;
    try {
      const result = await cli(['admin', 'user', 'create', '--username', 'first', '--password', 'first-password', '--email', 'first@example.com'], {
        DATA_DIR: fresh,
        LOG_LEVEL: 'silent',
        ...(database ? { DATABASE_URL: database.url } : {}),
      });
      expect(result.code).toBe(0);
      if (!database) expect(fs.existsSync(path.join(fresh, 'anvil.db'))).toBe(true);
      // The very first user need not change the password: the server lets them in at once.
      const served = await startTestApp({ DATA_DIR: fresh, ...(database ? { DATABASE_URL: database.url } : {}) });
      try {
        await served.http.get(served.api('/user')).set(withBasic('first', 'first-password')).expect(200);
      } finally {
        await served.close();
      }
    } finally {
      await database?.drop();
      fs.rmSync(fresh, { recursive: true, force: true });
    }
  });

  it('dump: the archive is the owner’s alone from its first byte, whatever umask the CLI was started with', async () => {
    // A file large enough that tar writes the archive for a while: the partial archive is looked at as it appears.
    const big = path.join(t.dataDir, 'attachments', 'dump-mode-probe');
    fs.mkdirSync(path.dirname(big), { recursive: true });
    fs.writeFileSync(big, randomBytes(24 << 20));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dump-mode-'));
    const archive = path.join(dir, 'dump.tar.gz');
    const modes: number[] = [];
    const watcher = fs.watch(dir, (_event, name) => {
      if (!name?.includes('.partial-')) return;
      try {
        modes.push(fs.statSync(path.join(dir, name)).mode & 0o777);
      } catch {
        // Renamed already: nothing to see.
      }
    });
    const previousUmask = process.umask(0o022);
    let result;
    let umaskAfter: number;
    try {
      result = await cli(['dump', '--file', archive]);
    } finally {
      watcher.close();
      umaskAfter = process.umask(previousUmask);
      fs.rmSync(big, { force: true });
    }
    expect(result.err).toEqual([]);
    expect(result.code).toBe(0);
    // The CLI runs with umask 077, as the server does.
    expect(umaskAfter).toBe(0o077);
    expect(modes.length).toBeGreaterThan(0);
    expect(new Set(modes)).toEqual(new Set([0o600]));
    expect(fs.statSync(archive).mode & 0o777).toBe(0o600);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('restore refuses an archive holding a link, a FIFO or a member outside the data areas, unpacking nothing', async () => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'hostile-archive-'));
    const elsewhere = path.join(work, 'elsewhere');
    fs.mkdirSync(elsewhere);
    const craft = (name: string, make: (root: string) => void): string => {
      const root = path.join(work, name);
      fs.mkdirSync(root);
      fs.writeFileSync(
        path.join(root, 'manifest.json'),
        JSON.stringify({ format: 1, database: t.config.database.type, migrations: [], repositories: 0, files: 0 }),
      );
      make(root);
      const archive = path.join(work, `${name}.tar.gz`);
      execFileSync('tar', ['-C', root, '-czf', archive, '.']);
      return archive;
    };
    const cases: [string, RegExp][] = [
      [craft('link', (root) => fs.symlinkSync(elsewhere, path.join(root, 'attachments'))), /attachments is a symbolic link/],
      [craft('fifo', (root) => execFileSync('mkfifo', [path.join(root, 'secret_key')])), /secret_key is not a file or a directory/],
      [craft('stray', (root) => fs.mkdirSync(path.join(root, 'etc'))), /etc\/ lies outside the data areas/],
    ];
    for (const [archive, message] of cases) {
      const target = path.join(work, `restore-${path.basename(archive, '.tar.gz')}`);
      const result = await cli(['restore', '--file', archive], { ...env, DATA_DIR: target });
      expect(result.code).toBe(1);
      expect(result.err.join('\n')).toMatch(message);
      // Nothing was unpacked, and nothing reached the link's target.
      expect(fs.readdirSync(target)).toEqual([]);
    }
    expect(fs.readdirSync(elsewhere)).toEqual([]);
    fs.rmSync(work, { recursive: true, force: true });
  });
});
