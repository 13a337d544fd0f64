import { AuditService } from '../audit/audit.service';
import { TooManyRequestsError } from '../common/errors';
import { RateLimits } from '../http/rate-limits';
import { plainAddress } from '../config/net-address';
import { formatAddress } from '../config/net-address';
import { BeforeApplicationShutdown, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AuthContext } from '../auth/auth-context';
import { SshEndpoint } from '../common/ssh-endpoint';
import { Clock } from '../common/time';
import { GitConfig, SiteConfig, SshConfig } from '../config/slices';
import { addressKey } from '../git/git-client';
import { GitBusyError, GitProcesses, isSafeGitProtocol } from '../git/git-processes';
import { PublicKeyEntity } from '../keys/ssh/public-key.entity';
import { sshFingerprint } from '../keys/ssh/ssh-key-parser';
import { SshKeyLookup } from '../keys/ssh/ssh-key-lookup';
import { accountStateProblem, GitTarget, RepositoryGitAccess } from '../repos/repository-git-access';
import type { GitRefusal } from '../access/git-access-decision';
import { archivedPushSsh } from '../access/access-policy';
import { DeployKeyPrincipal } from '../access/repository-policy';
import { DeployKeyEntity } from '../deploy-keys/deploy-key.entity';
import { DeployKeyLookup } from '../deploy-keys/deploy-key-lookup';
import { UserEntity } from '../users/user.entity';
import { UserAccounts } from '../users/user-accounts';
import { parseSshCommand, SshVerb } from './ssh-command';
import { LfsSshAuthentication } from '../lfs/lfs-ssh-authentication';
import type { RepositoryEntity } from '../repos/repository.entity';
import type { PushContext } from '../git/push-hooks';
import type { GitClient } from '../git/git-client';
import { loadOrCreateHostKey } from './ssh-host-key';
import { StorageReserve } from '../server/storage-reserve';
import { SshChannel, SshConnection, SshSignIn, SshTransport, SshTransportThread } from './ssh-transport';

// One cohesive thing, kept whole though long: the SSH server's decisions (admission, sign-in, git commands).

/** Who an authenticated connection is: a user by one of their keys, or a deploy key. */
type SshIdentity = { kind: 'user'; key: PublicKeyEntity; user: UserEntity } | { kind: 'deploy'; key: DeployKeyEntity; principal: DeployKeyPrincipal };

/** How long after its transport's thread stopped unasked a new one starts. */
const TRANSPORT_RESTART_MS = 1_000;

/** A refusal written as `Anvil: <message>` with exit status 1 (docs/git-transports.md). */
class SshRefusal extends Error {}

/** A TCP connection before and after login: what the pre-login limits count. */
interface Arrival {
  address: string;
  authenticated: boolean;
  grace: NodeJS.Timeout;
}

/**
 * The built-in SSH server (docs/git-transports.md): public-key login as SSH_USER with a registered key, the greeting,
 * and git-upload-pack / git-receive-pack / git-upload-archive through the same serving processes and hooks as
 * smart HTTP. The protocol itself (encryption, packets, sockets) runs on the transport's thread (ssh-transport.ts).
 */
@Injectable()
export class SshServer implements OnApplicationBootstrap, BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger('SshServer');
  private transport: SshTransport | null = null;
  /** The first transport's thread, started with this server (below) and listening once the application is ready. */
  private thread: SshTransportThread | null = null;
  private shuttingDown = false;
  /** Open TCP connections by the transport's number, and how many have not logged in, in all and per address. */
  private readonly arrivals = new Map<number, Arrival>();
  private unauthenticated = 0;
  private readonly unauthenticatedByAddress = new Map<string, number>();

  constructor(
    private readonly gitConfig: GitConfig,
    private readonly siteConfig: SiteConfig,
    private readonly sshConfig: SshConfig,
    private readonly endpoint: SshEndpoint,
    private readonly keys: SshKeyLookup,
    private readonly deployKeys: DeployKeyLookup,
    private readonly users: UserAccounts,
    private readonly access: RepositoryGitAccess,
    private readonly processes: GitProcesses,
    private readonly clock: Clock,
    private readonly audit: AuditService,
    private readonly lfs: LfsSshAuthentication,
    private readonly storageReserve: StorageReserve,
    private readonly limits: RateLimits,
  ) {
    if (this.sshConfig.enabled) this.thread = new SshTransportThread();
  }

  async onApplicationBootstrap(): Promise<void> {
    if (!this.sshConfig.enabled) return;
    const { key, generated } = loadOrCreateHostKey(this.sshConfig.hostKeyFile);
    if (generated) this.logger.log(`generated the SSH host key ${this.sshConfig.hostKeyFile}`);
    const thread = this.thread ?? undefined;
    this.thread = null;
    const address = await this.listen(key, this.sshConfig.listenPort, thread);
    this.endpoint.bound(address.port);
    // The start-up line (server/serve.ts) names this address; the details are for debugging.
    this.logger.debug(`SSH server listening on ${formatAddress(address)} (ssh_url port ${this.endpoint.port}, user ${this.sshConfig.user})`);
  }

  /** Starts the transport's thread on `port`; if it stops unasked, a new one listens on the same port. */
  private async listen(hostKey: Buffer, port: number, thread?: SshTransportThread): Promise<{ address: string; family: string; port: number }> {
    const transport = await SshTransport.start(
      { hostKey, listenHost: this.sshConfig.listenHost, listenPort: port, maxConnections: this.sshConfig.maxConnections },
      {
        arrive: (arrival, ip) => this.arrive(arrival, ip),
        left: (arrival) => this.left(arrival),
        connection: (client, arrival, ip) => this.accept(client, arrival, ip),
        log: (message) => this.logger.error(message),
        stopped: () => {
          if (this.transport !== transport) return;
          this.transport = null;
          // Its connections, logged in or not, are gone with it.
          for (const arrival of this.arrivals.values()) clearTimeout(arrival.grace);
          this.arrivals.clear();
          this.unauthenticated = 0;
          this.unauthenticatedByAddress.clear();
          const bound = transport.bound!.port;
          const restart = setTimeout(() => {
            if (this.shuttingDown) return;
            this.listen(hostKey, bound).then(
              () => this.logger.log(`SSH server listening again on port ${bound}`),
              (error: Error) => this.logger.error(`SSH server not restarted: ${error.message}`),
            );
          }, TRANSPORT_RESTART_MS);
          restart.unref();
        },
      },
      thread,
    );
    this.transport = transport;
    return transport.bound!;
  }

  /** `host:port` as bound, or null while not listening. */
  listeningAddress(): string | null {
    const address = this.transport?.bound;
    return address ? formatAddress(address) : null;
  }

  /** Connections not logged in yet (for tests and metrics). */
  get unauthenticatedCount(): number {
    return this.unauthenticated;
  }

  /**
   * A new TCP connection: refused at once beyond the caps on connections not logged in (in all and from one
   * address; the total cap is the transport's maxConnections), else handed to ssh2 with LOGIN_GRACE_TIME to log
   * in. What it costs until then is one socket and one timer.
   */
  private arrive(arrival: number, ip: string): void {
    const transport = this.transport;
    if (!transport) return;
    const address = addressKey(ip);
    const fromAddress = this.unauthenticatedByAddress.get(address) ?? 0;
    if (this.unauthenticated >= this.sshConfig.maxUnauthenticated || fromAddress >= this.sshConfig.maxUnauthenticatedPerAddress) {
      transport.drop(arrival);
      return;
    }
    const grace = setTimeout(() => transport.drop(arrival), this.sshConfig.loginGraceMs);
    grace.unref();
    this.arrivals.set(arrival, { address, authenticated: false, grace });
    this.countUnauthenticated(address, 1);
    transport.admit(arrival);
  }

  /** The TCP connection closed: it leaves the pre-login counts if it was still in them. */
  private left(arrival: number): void {
    const entry = this.arrivals.get(arrival);
    if (!entry) return;
    clearTimeout(entry.grace);
    this.arrivals.delete(arrival);
    if (!entry.authenticated) this.countUnauthenticated(entry.address, -1);
  }

  /** Login succeeded: the connection leaves the pre-login counts and its grace timer stops. */
  private loggedIn(arrival: number): void {
    const entry = this.arrivals.get(arrival);
    if (!entry || entry.authenticated) return;
    entry.authenticated = true;
    clearTimeout(entry.grace);
    this.countUnauthenticated(entry.address, -1);
  }

  private countUnauthenticated(address: string, delta: number): void {
    this.unauthenticated += delta;
    const next = (this.unauthenticatedByAddress.get(address) ?? 0) + delta;
    if (next <= 0) this.unauthenticatedByAddress.delete(address);
    else this.unauthenticatedByAddress.set(address, next);
  }

  /** Stops accepting connections; running git commands finish while GitProcesses drains. */
  async beforeApplicationShutdown(): Promise<void> {
    this.shuttingDown = true;
    this.transport?.stopListening();
  }

  async onApplicationShutdown(): Promise<void> {
    const transport = this.transport;
    this.transport = null;
    await this.thread?.discard();
    this.thread = null;
    for (const arrival of this.arrivals.values()) clearTimeout(arrival.grace);
    this.arrivals.clear();
    await transport?.close();
  }

  private accept(client: SshConnection, arrival: number, ip: string): void {
    let identity: SshIdentity | null = null;
    let refusals = 0;
    const address = ip;
    // Failed sign-ins count against the address as HTTP's do (RATE_LIMIT_SIGN_IN_PER_IP, the same budget).
    const limitKey = `ip:${plainAddress(address)}`;
    let overLimit: Promise<boolean> | null = null;
    // A connection that never runs a command is closed after the idle limit, as an idle git exchange is.
    let idle: NodeJS.Timeout | null = setTimeout(() => client.end(), this.gitConfig.idleTimeoutMs);
    idle.unref();
    const stopIdle = () => {
      if (idle) clearTimeout(idle);
      idle = null;
    };
    client.on('close', () => {
      stopIdle();
      // A connection that offered keys and ended without one accepted is one failed sign-in (clients try
      // their keys one by one, so a single refused key is not). Only failures the limit admits are recorded,
      // so a flood of them writes no more rows than the limit.
      if (!identity && refusals > 0) void this.recordFailure(limitKey, plainAddress(address));
    });
    client.on('authentication', (context: SshSignIn) => {
      // Each refused attempt counts (the `none` probe every client starts with does not); past
      // SSH_MAX_AUTH_TRIES the connection is closed.
      const refuse = () => {
        if (context.method !== 'none') refusals += 1;
        if (refusals >= this.sshConfig.maxAuthTries) {
          client.end();
          return;
        }
        context.reject();
      };
      // An address that has spent its allowance of failures is refused before any key is looked at.
      overLimit ??= this.limits.check('signInPerIp', limitKey).then(
        () => false,
        (error: unknown) => {
          if (error instanceof TooManyRequestsError) return true;
          this.logger.warn(`SSH sign-in limit not checked: ${(error as Error).message}`);
          return false;
        },
      );
      const limited = overLimit;
      const decide = async (): Promise<SshIdentity | 'accept-query' | 'over-limit' | null> => ((await limited) ? 'over-limit' : this.authenticate(context));
      decide()
        .then(async (found) => {
          if (found === 'over-limit') {
            client.end();
            return;
          }
          if (found === 'accept-query') return context.accept();
          if (!found) return refuse();
          identity = found;
          if (found.kind === 'user') await this.audit.signIn('success', 'ssh', plainAddress(address), { id: found.user.id, name: found.user.name });
          context.accept();
        })
        .catch((error: unknown) => {
          this.logger.error(`SSH authentication failed with an error: ${(error as Error).message}`);
          refuse();
        });
    });
    client.on('ready', () => this.loggedIn(arrival));
    client.on('shell', (channel: SshChannel) => {
      stopIdle();
      void this.greet(channel, identity!);
    });
    client.on('exec', (channel: SshChannel, command: string, protocol: string | undefined) => {
      stopIdle();
      const safeProtocol = protocol !== undefined && isSafeGitProtocol(protocol) ? protocol : undefined;
      this.execute(channel, identity!, address, command, safeProtocol).catch((error: unknown) => {
        const message = error instanceof SshRefusal ? error.message : 'Internal error';
        if (!(error instanceof SshRefusal)) this.logger.error(`SSH command failed: ${(error as Error).stack ?? error}`);
        finish(channel, 1, message);
      });
    });
  }

  /** Counts one failed SSH sign-in against the address and records it, unless the address is over its limit. */
  private async recordFailure(limitKey: string, address: string): Promise<void> {
    try {
      await this.limits.consume('signInPerIp', limitKey);
    } catch (error) {
      if (!(error instanceof TooManyRequestsError)) this.logger.warn(`SSH sign-in failure not counted: ${(error as Error).message}`);
      return;
    }
    await this.audit.signIn('failure', 'ssh', address, null, this.sshConfig.user);
  }

  /**
   * Only `publickey` as SSH_USER, with a key registered for a user or as a deploy key of some repository
   * (looked up on every connection, so a deleted key is locked out at once). Without a signature the client
   * only asks whether the key would do.
   */
  private async authenticate(context: SshSignIn): Promise<SshIdentity | 'accept-query' | null> {
    const key = context.key;
    if (context.method !== 'publickey' || context.username !== this.sshConfig.user || !key) return null;
    if (key.algo.includes('-cert-')) return null;
    const fingerprint = sshFingerprint(key.data);
    const userKey = await this.keys.byFingerprint(fingerprint);
    const deployKey = userKey ? null : await this.deployKeys.firstByFingerprint(fingerprint);
    const content = userKey?.content ?? deployKey?.content;
    if (content === undefined) return null;
    const verdict = await context.check(content);
    if (verdict === 'query') return 'accept-query';
    if (verdict !== 'valid') return null;
    if (deployKey) return { kind: 'deploy', key: deployKey, principal: new DeployKeyPrincipal(fingerprint) };
    const user = await this.users.byId(userKey!.ownerId);
    return user ? { kind: 'user', key: userKey!, user } : null;
  }

  /** A shell request (`ssh git@host`): the greeting on stdout and exit 0, or the account-state message and exit 1. */
  private async greet(channel: SshChannel, identity: SshIdentity): Promise<void> {
    if (identity.kind === 'deploy') {
      channel.write(`Hi there! You've successfully authenticated with the deploy key named ${identity.key.name}, but Anvil does not provide shell access.\n`);
      return finish(channel, 0);
    }
    const user = (await this.users.byId(identity.user.id)) ?? identity.user;
    const problem = accountStateProblem(user, this.siteConfig.rootUrl);
    if (problem) return finish(channel, 1, problem);
    channel.write(
      `Hi there, ${user.name}! You've successfully authenticated with the key named ${identity.key.name}, but Anvil does not provide shell access.\n` +
        'If this is unexpected, please log in with password and setup Anvil under another user.\n',
    );
    finish(channel, 0);
  }

  /** The SSH decision order (docs/git-transports.md, "SSH"), then git with the channel as its standard streams. */
  private async execute(channel: SshChannel, identity: SshIdentity, address: string, command: string, protocol: string | undefined): Promise<void> {
    if (identity.kind === 'deploy') return this.executeForDeployKey(channel, identity, address, command, protocol);
    // 1. Account state, as stored now.
    const user = await this.users.byId(identity.user.id);
    if (!user) throw new SshRefusal('Your account is disabled.');
    const problem = accountStateProblem(user, this.siteConfig.rootUrl);
    if (problem) throw new SshRefusal(problem);
    // 2. The command.
    const parsed = parseSshCommand(command);
    if ('error' in parsed) throw new SshRefusal(parsed.error);
    if (parsed.lfsOperation && !this.lfs.enabled) throw new SshRefusal('Unknown git command');
    const typed = `${parsed.owner}/${parsed.repo}`;
    // 3. The repository, as the caller may see it; 4. mirrors are read-only; 5. write permission before git runs
    // (git-access-decision.ts: a public repository of a public owner needs no further question for a pull, except
    // from a restricted user, whom the policy gives only what teams and collaborations give).
    const viewer = new AuthContext(user, 'ssh-key', null);
    const target = await this.access.find(parsed.owner, parsed.repo);
    const push = parsed.verb === 'git-receive-pack' || parsed.lfsOperation === 'upload';
    const decision = await this.access.decide(viewer, target, push ? 'push' : 'pull', 'ssh', parsed.verb === 'git-receive-pack');
    if (!decision.allowed) {
      const key = identity.key;
      throw new SshRefusal(
        sshRefusal(decision.refusal, typed, target, `User: ${user.id}:${user.name} with Key: ${key.id}:${key.name} is not authorized to write to ${typed}.`),
      );
    }
    const owner = target.owner!;
    const repo = target.repo!;
    if (push) {
      const lowSpace = this.storageReserve.refusal();
      if (lowSpace) throw new SshRefusal(lowSpace);
    }
    if (parsed.lfsOperation) {
      // The LFS client reads where and how to reach the LFS API over HTTP, with a token for this operation.
      channel.write(`${this.lfs.answer(user, owner, repo, parsed.lfsOperation)}\n`);
      return finish(channel, 0);
    }
    const code = await this.runGit(
      channel,
      parsed.verb,
      { owner, repo },
      protocol,
      push ? { repositoryId: repo.id, pusherId: user.id, keyId: identity.key.id, ...(decision.asMaintainer ? { asMaintainer: true } : {}) } : undefined,
      {
        address,
        userId: user.id,
      },
    );
    if (code === 0) await this.noteUse(() => this.keys.recordUse(identity.key.id, this.clock.nowUnix()));
    finish(channel, code ?? 1);
  }

  /**
   * A deploy key reaches only the repositories it was added to, as the access policy says: clone always, push
   * when it is not read-only. Elsewhere it is refused as a caller without access is, with Forgejo's words where
   * the repository is public and "cannot find" where it is not, so that a key learns nothing of private ones.
   * Its pushes are recorded as the repository owner's, as Forgejo does.
   */
  private async executeForDeployKey(
    channel: SshChannel,
    identity: Extract<SshIdentity, { kind: 'deploy' }>,
    address: string,
    command: string,
    protocol: string | undefined,
  ): Promise<void> {
    const parsed = parseSshCommand(command);
    if ('error' in parsed) throw new SshRefusal(parsed.error);
    // LFS tokens act as a user; a deploy key is none.
    if (parsed.lfsOperation) throw new SshRefusal('Unknown git command');
    const typed = `${parsed.owner}/${parsed.repo}`;
    const push = parsed.verb === 'git-receive-pack';
    const target = await this.access.find(parsed.owner, parsed.repo);
    const keyName = `${identity.key.id}:${identity.key.name}`;
    const decision = await this.access.decide(identity.principal, target, push ? 'push' : 'pull', 'ssh');
    if (!decision.allowed) {
      if (decision.refusal === 'deploy-key-not-authorized') {
        throw new SshRefusal(`Public (Deploy) Key: ${keyName} is not authorized to ${push ? 'write to' : 'read'} ${typed}.`);
      }
      throw new SshRefusal(sshRefusal(decision.refusal, typed, target, `Deploy Key: ${keyName} is not authorized to write to ${typed}.`));
    }
    const owner = target.owner!;
    const repo = target.repo!;
    if (push) {
      const lowSpace = this.storageReserve.refusal();
      if (lowSpace) throw new SshRefusal(lowSpace);
    }
    const code = await this.runGit(
      channel,
      parsed.verb,
      { owner, repo },
      protocol,
      push ? { repositoryId: repo.id, pusherId: repo.ownerId, deployKey: true } : undefined,
      { address, userId: null },
    );
    if (code === 0) await this.noteUse(() => this.deployKeys.recordUse(repo.id, identity.principal.fingerprint, this.clock.nowUnix()));
    finish(channel, code ?? 1);
  }

  /** A key's last use is bookkeeping: when it cannot be written (a full disk), the git exchange still succeeded. */
  private async noteUse(record: () => Promise<void>): Promise<void> {
    try {
      await record();
    } catch (error) {
      this.logger.warn(`a key's last use was not recorded: ${(error as Error).message}`);
    }
  }

  /** Runs git with the channel as its standard streams; its exit code. */
  private async runGit(
    channel: SshChannel,
    verb: SshVerb,
    place: { owner: UserEntity; repo: RepositoryEntity },
    protocol: string | undefined,
    push: PushContext | undefined,
    client: GitClient,
  ): Promise<number | null> {
    let git;
    // A request waits for a slot while its client keeps the channel open (GitProcesses).
    const connection = new AbortController();
    const gone = () => connection.abort();
    channel.once('close', gone);
    try {
      git = await this.processes.start({
        service: verb.slice('git-'.length) as 'upload-pack' | 'receive-pack' | 'upload-archive',
        dir: this.access.directory(place),
        protocol,
        push,
        client,
        connection: connection.signal,
      });
    } catch (error) {
      if (error instanceof GitBusyError) throw new SshRefusal(error.message);
      throw error;
    } finally {
      channel.off('close', gone);
    }
    // The channel stays open for the whole exchange (the client waits on it for the pack): only the output side
    // is the peer's pace.
    git.feed(channel, { peerPaced: false });
    git.deliver(channel);
    git.child.stderr.pipe(channel.stderr, { end: false });
    channel.on('close', () => git.kill());
    const code = await git.exited;
    // Stopped by a limit, git left its answer unfinished, and a client that stopped reading would never take the
    // rest: the channel is cut, as the HTTP path cuts its response.
    if (code === null) channel.destroy();
    return code;
  }
}

function finish(channel: SshChannel, status: number, message?: string): void {
  // The client may have gone already; there is then nobody to tell.
  if (channel.destroyed) return;
  if (message !== undefined) channel.stderr.write(`Anvil: ${message}\n`);
  channel.exit(status);
  channel.end();
}

/** The SSH server's words for a refusal of the git decision (git-access-decision.ts), as Forgejo's serv writes them. */
function sshRefusal(refusal: GitRefusal, typed: string, target: GitTarget, notWriter: string): string {
  switch (refusal) {
    case 'mirror':
      return `Mirror Repository ${typed} is read-only`;
    case 'not-writer':
      return notWriter;
    case 'archived':
      return archivedPushSsh(target.owner!.name, target.repo!.name);
    default:
      // Over SSH a user is signed in and holds no token, so only an unreadable repository remains.
      return `Cannot find repository: ${typed}`;
  }
}
