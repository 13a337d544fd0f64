import { Command, CommanderError, Option } from 'commander';
import { DataSource } from 'typeorm';
import { CreateUserOption } from '../admin/create-user.option';
import { validateOption } from '../common/body';
import { DomainError } from '../common/errors';
import { Clock } from '../common/time';
import { SshEndpoint } from '../common/ssh-endpoint';
import type { AppConfig } from '../config/config';
import { openDatabase } from '../database/data-source';
import { Transactions } from '../database/transactions';
import { AccessTokenStore } from '../users/access-token.store';
import { AccessTokensService } from '../users/access-tokens.service';
import { OrganizationStore } from '../users/organization.store';
import { UserStore } from '../users/user.store';
import { UsersService } from '../users/users.service';

export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

interface CreateUserFlags {
  username: string;
  password: string;
  email: string;
  admin?: boolean;
  accessToken?: boolean;
  accessTokenScopes: string;
  mustChangePassword?: boolean;
}

/**
 * The admin command line (behaviour 10.1). Runs against the same database and data directory as the server,
 * migrating first, so it works on a fresh data directory. Returns the exit status.
 */
export async function runCli(argv: string[], config: AppConfig, output: CliOutput): Promise<number> {
  let exitCode = 0;
  const program = new Command('anvil')
    .exitOverride()
    .configureOutput({ writeOut: (text) => output.out(text.trimEnd()), writeErr: (text) => output.err(text.trimEnd()) })
    .showHelpAfterError();
  const admin = program.command('admin').description('administration commands');
  const user = admin.command('user').description('manage users');
  user
    .command('create')
    .description('create a user')
    .requiredOption('--username <name>', 'user name')
    .requiredOption('--password <password>', 'password (at least 8 characters)')
    .requiredOption('--email <email>', 'primary e-mail address (stored as verified)')
    .option('--admin', 'make the user a site administrator')
    .option('--access-token', "create an access token named 'gitea-admin' and print it as the last line")
    .option('--access-token-scopes <scopes>', 'scopes of that token, comma separated', 'all')
    .addOption(
      new Option('--must-change-password [bool]', 'require a password change (default: true, false for the first user)').argParser(parseBoolean),
    )
    .action(async (flags: CreateUserFlags) => {
      exitCode = await createUser(flags, config, output);
    });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (error) {
    if (error instanceof CommanderError) {
      return error.exitCode === 0 ? 0 : 2;
    }
    output.err(`error: ${(error as Error).message}`);
    return 1;
  }
  return exitCode;
}

async function createUser(flags: CreateUserFlags, config: AppConfig, output: CliOutput): Promise<number> {
  let dataSource: DataSource | undefined;
  try {
    validateOption(CreateUserOption, { username: flags.username, email: flags.email, password: flags.password });
    dataSource = await openDatabase(config);
    const transactions = new Transactions(dataSource);
    const clock = new Clock();
    const userStore = new UserStore(dataSource);
    const users = new UsersService(userStore, new OrganizationStore(dataSource), transactions, clock, config, new SshEndpoint(config));
    const tokens = new AccessTokensService(new AccessTokenStore(dataSource), userStore, transactions, clock);
    const firstUser = await users.noUsersYet();
    const created = await users.create({
      username: flags.username,
      email: flags.email,
      password: flags.password,
      isAdmin: flags.admin ?? false,
      mustChangePassword: flags.mustChangePassword ?? !firstUser,
    });
    output.out(`New user '${created.name}' has been successfully created!`);
    if (flags.accessToken) {
      const token = await tokens.create(created, 'gitea-admin', flags.accessTokenScopes.split(','));
      output.out(token.plaintext);
    }
    return 0;
  } catch (error) {
    output.err(`error: ${error instanceof DomainError ? error.message : (error as Error).message}`);
    return 1;
  } finally {
    await dataSource?.destroy();
  }
}

function parseBoolean(value: string | undefined): boolean {
  if (value === undefined || value === 'true') return true;
  if (value === 'false') return false;
  throw new CommanderError(2, 'anvil.invalidBoolean', `expected true or false, got "${value}"`);
}
