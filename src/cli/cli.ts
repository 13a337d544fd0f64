import { randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Command, CommanderError, Option } from 'commander';
import { CreateUserOption } from '../admin/create-user.option';
import { AppModule } from '../app.module';
import { CLI_ACTOR, runAsActor } from '../audit/audit-context';
import { AuditService } from '../audit/audit.service';
import { AuthContext } from '../auth/auth-context';
import { validateOption } from '../http/body-binding';
import { NotFoundError } from '../common/errors';
import { Reconciliation } from '../integrity/reconciliation.service';
import { dump } from '../backup/backup';
import { PRIVATE_UMASK } from '../server/data-directory';
import { assertEmptyDatabase, forgetLiveCoordination, loadMysqlRows, unpack } from '../backup/restore';
import { DataSource } from 'typeorm';
import type { AppConfig } from '../config/config';
import { AccessTokensService } from '../users/access-tokens.service';
import { UsersService } from '../users/users.service';

export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

interface PasswordFlags {
  password?: string;
  passwordStdin?: boolean;
  randomPassword?: boolean;
}

interface CreateUserFlags extends PasswordFlags {
  username: string;
  email: string;
  admin?: boolean;
  accessToken?: boolean;
  accessTokenScopes: string;
  mustChangePassword?: boolean;
}

interface ChangePasswordFlags extends PasswordFlags {
  username: string;
  mustChangePassword?: boolean;
}

/** A bad combination of arguments: usage error, exit 2. */
class UsageError extends Error {}

/**
 * The admin command line. Runs against the same database and data directory as the server,
 * migrating first, so it works on a fresh data directory. The services are the server's own, so a deletion
 * cleans up exactly as the API's does. Returns the exit status. It holds the whole AppConfig, as start-up does:
 * it builds the same application context from it.
 */
export async function runCli(argv: string[], config: AppConfig, output: CliOutput, stdin: Readable = process.stdin): Promise<number> {
  // What the CLI writes (archives, restored data, the database) is the owner's alone, as the server's is.
  process.umask(PRIVATE_UMASK);
  let action: (() => Promise<number>) | undefined;
  const program = new Command('anvil')
    .exitOverride()
    .configureOutput({ writeOut: (text) => output.out(text.trimEnd()), writeErr: (text) => output.err(text.trimEnd()) })
    .showHelpAfterError();
  const admin = program.command('admin').description('administration commands');
  const user = admin.command('user').description('manage users');
  withPasswordOptions(user.command('create').description('create a user').requiredOption('--username <name>', 'user name'))
    .requiredOption('--email <email>', 'primary e-mail address (stored as verified)')
    .option('--admin', 'make the user a site administrator')
    .option('--access-token', "create an access token named 'gitea-admin' and print it as the last line")
    .option('--access-token-scopes <scopes>', 'scopes of that token, comma separated', 'all')
    .addOption(new Option('--must-change-password [bool]', 'require a password change (default: true, false for the first user)').argParser(parseBoolean))
    .action((flags: CreateUserFlags) => {
      action = () => createUser(flags, config, output, stdin);
    });
  user
    .command('list')
    .description('list the user accounts')
    .option('--admin', 'only site administrators')
    .action((flags: { admin?: boolean }) => {
      action = () => listUsers(flags, config, output);
    });
  withPasswordOptions(user.command('change-password').description("set a user's password").requiredOption('--username <name>', 'user name'))
    .addOption(new Option('--must-change-password [bool]', 'require a change at the next sign-in (default: true)').argParser(parseBoolean))
    .action((flags: ChangePasswordFlags) => {
      action = () => changePassword(flags, config, output, stdin);
    });
  user
    .command('delete')
    .description('delete a user (who must own no repositories and belong to no organisation)')
    .requiredOption('--username <name>', 'user name')
    .action((flags: { username: string }) => {
      action = () => deleteUser(flags.username, config, output);
    });
  program
    .command('doctor')
    .description('compare the database with DATA_DIR (what a crash may leave half-made); report only, unless --fix')
    .option('--fix', 'repair what was found (leftovers that could be user data go to DATA_DIR/lost+found)')
    .action((flags: { fix?: boolean }) => {
      action = () => doctor(flags.fix === true, config, output);
    });
  program
    .command('dump')
    .description('write one consistent archive (tar.gz) of the database, repositories, uploads, SSH host key and secret key')
    .requiredOption('--file <archive>', 'where to write the archive')
    .action((flags: { file: string }) => {
      action = () => dumpCommand(flags.file, config, output);
    });
  program
    .command('restore')
    .description('bring an archive of `anvil dump` back into an empty DATA_DIR and an empty database')
    .requiredOption('--file <archive>', 'the archive to restore')
    .action((flags: { file: string }) => {
      action = () => restoreCommand(flags.file, config, output);
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
    return action ? await action() : 0;
  } catch (error) {
    if (error instanceof CommanderError) return error.exitCode === 0 ? 0 : 2;
    if (error instanceof UsageError) {
      output.err(`error: ${error.message}`);
      return 2;
    }
    // The API's 404 has no message; the console says what was missing.
    output.err(`error: ${error instanceof NotFoundError ? 'user does not exist' : (error as Error).message}`);
    return 1;
  }
}

function withPasswordOptions(command: Command): Command {
  return command
    .option('--password <password>', 'the password (at least 8 characters); visible to other local users, prefer the next two')
    .option('--password-stdin', 'read the password from the first line of standard input')
    .option('--random-password', 'generate a random password and print it once');
}

/** Exactly one password source; a generated one is printed once, here. */
async function passwordFrom(flags: PasswordFlags, output: CliOutput, stdin: Readable): Promise<string> {
  const sources = [flags.password !== undefined, flags.passwordStdin === true, flags.randomPassword === true].filter(Boolean).length;
  if (sources !== 1) throw new UsageError('give exactly one of --password, --password-stdin and --random-password');
  if (flags.password !== undefined) return flags.password;
  if (flags.passwordStdin) {
    const line = (await readFirstLine(stdin)).replace(/\r$/, '');
    if (line === '') throw new UsageError('--password-stdin: standard input held no password');
    return line;
  }
  const generated = randomBytes(18).toString('base64url');
  output.out(`generated random password is '${generated}'`);
  return generated;
}

/** The first line of a stream, read up to 4 KiB (a password, not a file). */
async function readFirstLine(stream: Readable): Promise<string> {
  let text = '';
  for await (const chunk of stream) {
    text += typeof chunk === 'string' ? chunk : (chunk as Buffer).toString('utf8');
    if (text.includes('\n') || text.length > 4096) break;
  }
  return text.split('\n')[0].slice(0, 4096);
}

/**
 * The server's own services on the configured database (migrated first), closed again afterwards. Nothing
 * listens: the SSH server stays off, so the CLI runs beside a running server.
 */
async function withServices<T>(config: AppConfig, work: (context: INestApplicationContext) => Promise<T>): Promise<T> {
  // Standard output carries what a command prints (a token, a report): the services' log lines, the audit
  // log's included, go to standard error unless LOG_FILE names a file.
  const quiet = { ...config, logStream: 'stderr' as const, ssh: { ...config.ssh, enabled: false } };
  const context = await NestFactory.createApplicationContext(AppModule.forRoot(quiet), { logger: false, abortOnError: false });
  try {
    // What a command changes is recorded in the audit log as the command line's.
    return await runAsActor(CLI_ACTOR, () => work(context));
  } finally {
    await context.close();
  }
}

async function createUser(flags: CreateUserFlags, config: AppConfig, output: CliOutput, stdin: Readable): Promise<number> {
  validateOption(CreateUserOption, { username: flags.username, email: flags.email });
  const password = await passwordFrom(flags, output, stdin);
  validateOption(CreateUserOption, { username: flags.username, email: flags.email, password });
  return withServices(config, async (context) => {
    const users = context.get(UsersService);
    const firstUser = await users.noUsersYet();
    const created = await users.create({
      username: flags.username,
      email: flags.email,
      password,
      isAdmin: flags.admin ?? false,
      mustChangePassword: flags.mustChangePassword ?? !firstUser,
    });
    output.out(`New user '${created.name}' has been successfully created!`);
    if (flags.accessToken) {
      const token = await context.get(AccessTokensService).create(created, 'gitea-admin', flags.accessTokenScopes.split(','));
      output.out(token.plaintext);
    }
    return 0;
  });
}

async function listUsers(flags: { admin?: boolean }, config: AppConfig, output: CliOutput): Promise<number> {
  return withServices(config, async (context) => {
    const users = (await context.get(UsersService).listIndividuals()).filter((user) => !flags.admin || user.isAdmin);
    const rows = [
      ['ID', 'Username', 'Email', 'IsActive', 'IsAdmin', 'MustChangePassword'],
      ...users.map((user) => [String(user.id), user.name, user.email, String(user.isActive), String(user.isAdmin), String(user.mustChangePassword)]),
    ];
    const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
    for (const row of rows)
      output.out(
        row
          .map((cell, column) => cell.padEnd(widths[column]))
          .join('  ')
          .trimEnd(),
      );
    return 0;
  });
}

async function changePassword(flags: ChangePasswordFlags, config: AppConfig, output: CliOutput, stdin: Readable): Promise<number> {
  const password = await passwordFrom(flags, output, stdin);
  return withServices(config, async (context) => {
    const user = await context.get(UsersService).edit(flags.username, { password, mustChangePassword: flags.mustChangePassword ?? true });
    output.out(`${user.name}'s password has been successfully updated!`);
    return 0;
  });
}

async function deleteUser(username: string, config: AppConfig, output: CliOutput): Promise<number> {
  return withServices(config, async (context) => {
    // The operator at the console is nobody in particular: not the user being deleted, whoever that is.
    await context.get(UsersService).delete(AuthContext.anonymous(), username);
    output.out(`User '${username}' has been deleted.`);
    return 0;
  });
}

async function dumpCommand(file: string, config: AppConfig, output: CliOutput): Promise<number> {
  return withServices(config, async (context) => {
    const manifest = await dump(context.get(DataSource), config, file);
    await context
      .get(AuditService)
      .recordAlone({ action: 'cli.dump', target: { type: 'site', name: 'site' }, detail: { file, repositories: manifest.repositories } });
    output.out(`dumped ${manifest.repositories} repositories and ${manifest.files} files with the ${manifest.database} database to ${file}`);
    return 0;
  });
}

/** Unpacks, opens (and migrates) the database, loads MySQL rows, then reconciles what the dump's moment left. */
async function restoreCommand(file: string, config: AppConfig, output: CliOutput): Promise<number> {
  const { manifest, rowsFile } = await unpack(config, file);
  return withServices(config, async (context) => {
    const dataSource = context.get(DataSource);
    if (rowsFile) {
      await assertEmptyDatabase(dataSource);
      await loadMysqlRows(dataSource, manifest, rowsFile);
    }
    await forgetLiveCoordination(dataSource);
    const report = await context.get(Reconciliation).run({ fix: true, allStale: true });
    await context
      .get(AuditService)
      .recordAlone({ action: 'cli.restore', target: { type: 'site', name: 'site' }, detail: { file, repositories: manifest.repositories } });
    for (const finding of report.findings) output.out(`${finding.kind}: ${finding.subject}: ${finding.action}`);
    output.out(
      `restored ${manifest.repositories} repositories and ${manifest.files} files from Anvil ${manifest.anvilVersion}; reconciliation repaired ${report.findings.length}`,
    );
    return 0;
  });
}

/** One line per finding; exit 1 when something was found and left as it was. */
async function doctor(fix: boolean, config: AppConfig, output: CliOutput): Promise<number> {
  return withServices(config, async (context) => {
    const report = await context.get(Reconciliation).run({ fix });
    if (fix)
      await context
        .get(AuditService)
        .recordAlone({ action: 'cli.doctor', target: { type: 'site', name: 'site' }, detail: { fix, findings: report.findings.length } });
    for (const finding of report.findings) output.out(`${finding.kind}: ${finding.subject}: ${finding.action}`);
    const unrepaired = report.findings.filter((finding) => !fix || finding.action.startsWith('not repaired')).length;
    output.out(`${report.findings.length} found, ${report.findings.length - unrepaired} repaired`);
    return unrepaired > 0 ? 1 : 0;
  });
}

function parseBoolean(value: string | undefined): boolean {
  if (value === undefined || value === 'true') return true;
  if (value === 'false') return false;
  throw new CommanderError(2, 'anvil.invalidBoolean', `expected true or false, got "${value}"`);
}
