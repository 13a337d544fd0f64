import { ChildProcess, execFileSync, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createConnection } from 'mysql2/promise';
import { freePorts, waitFor } from './ports';

/** One MariaDB Galera node on loopback: its own client, group-communication, IST and SST ports and data directory. */
interface GaleraNode {
  name: string;
  port: number;
  gcommPort: number;
  istPort: number;
  sstPort: number;
  dataDir: string;
  process?: ChildProcess;
}

const PROVIDER = '/usr/lib/galera/libgalera_smm.so';

/**
 * A three-node MariaDB Galera cluster (galera-4, rsync SST) under `root`, apart from any other MariaDB on the
 * machine: no default option files, its own ports and directories. The nodes run as the `mysql` user: an rsync
 * SST started by root drops to `nobody`, which then cannot write the joiner's data directory.
 */
export class GaleraCluster {
  readonly nodes: GaleraNode[];

  private constructor(
    private readonly root: string,
    ports: number[],
  ) {
    this.nodes = [0, 1, 2].map((index) => ({
      name: `node${index + 1}`,
      port: ports[index * 4],
      gcommPort: ports[index * 4 + 1],
      istPort: ports[index * 4 + 2],
      sstPort: ports[index * 4 + 3],
      dataDir: path.join(root, `node${index + 1}`),
    }));
  }

  static available(): boolean {
    return fs.existsSync(PROVIDER) && fs.existsSync('/usr/sbin/mariadbd');
  }

  /** Bootstraps node 1 with --wsrep-new-cluster, then joins nodes 2 and 3 (SST from node 1). */
  static async start(root: string): Promise<GaleraCluster> {
    fs.mkdirSync(root, { recursive: true, mode: 0o755 });
    const cluster = new GaleraCluster(root, await freePorts(12));
    for (const node of cluster.nodes) fs.mkdirSync(node.dataDir, { mode: 0o750 });
    execFileSync('chown', ['-R', 'mysql:mysql', root]);
    execFileSync(
      'mariadb-install-db',
      ['--no-defaults', '--user=mysql', `--datadir=${cluster.nodes[0].dataDir}`, '--auth-root-authentication-method=normal', '--skip-test-db'],
      { stdio: 'ignore' },
    );
    await cluster.startNode(0, true);
    await cluster.startNode(1);
    await cluster.startNode(2);
    await cluster.waitForSize(3);
    return cluster;
  }

  /** `mysql://user:password@node…/database`, listing the nodes from `first` on (an instance's own node first). */
  url(user: string, password: string, database: string, first = 0): string {
    const hosts = [0, 1, 2].map((offset) => this.nodes[(first + offset) % 3]).map((node) => `127.0.0.1:${node.port}`);
    return `mysql://${user}:${password}@${hosts.join(',')}/${database}`;
  }

  async query(index: number, sql: string, parameters: unknown[] = []): Promise<unknown[]> {
    const connection = await createConnection({ host: '127.0.0.1', port: this.nodes[index].port, user: 'root', multipleStatements: false });
    try {
      const [rows] = await connection.query(sql, parameters);
      return rows as unknown[];
    } finally {
      await connection.end();
    }
  }

  async startNode(index: number, newCluster = false): Promise<void> {
    const node = this.nodes[index];
    const addresses = this.nodes.map((each) => `127.0.0.1:${each.gcommPort}`).join(',');
    const args = [
      '-u',
      'mysql',
      '--',
      '/usr/sbin/mariadbd',
      '--no-defaults',
      `--datadir=${node.dataDir}`,
      `--socket=${path.join(this.root, `${node.name}.sock`)}`,
      `--pid-file=${path.join(this.root, `${node.name}.pid`)}`,
      `--log-error=${path.join(this.root, `${node.name}.err`)}`,
      `--port=${node.port}`,
      '--bind-address=127.0.0.1',
      '--skip-name-resolve',
      '--innodb-buffer-pool-size=32M',
      '--innodb-log-file-size=16M',
      '--max-connections=200',
      '--binlog-format=ROW',
      '--innodb-autoinc-lock-mode=2',
      '--log-bin-trust-function-creators=1',
      '--wsrep-on=ON',
      `--wsrep-provider=${PROVIDER}`,
      `--wsrep-cluster-address=gcomm://${addresses}`,
      '--wsrep-cluster-name=anvil-cluster-test',
      `--wsrep-node-name=${node.name}`,
      `--wsrep-node-address=127.0.0.1:${node.gcommPort}`,
      `--wsrep-provider-options=gmcast.listen_addr=tcp://127.0.0.1:${node.gcommPort};ist.recv_addr=127.0.0.1:${node.istPort};gcache.size=64M`,
      '--wsrep-sst-method=rsync',
      `--wsrep-sst-receive-address=127.0.0.1:${node.sstPort}`,
      ...(newCluster ? ['--wsrep-new-cluster'] : []),
    ];
    node.process = spawn('runuser', args, { stdio: 'ignore' });
    await waitFor(`${node.name} synced`, 180_000, async () => {
      const rows = (await this.query(index, "SHOW STATUS LIKE 'wsrep_local_state_comment'").catch(() => [])) as { Value: string }[];
      return rows[0]?.Value === 'Synced';
    });
  }

  /** kill -9 of one node's server. */
  async killNode(index: number): Promise<void> {
    const child = this.nodes[index].process;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // runuser execs nothing: the server is its child; kill the whole group of the node.
    const pid = Number(fs.readFileSync(path.join(this.root, `${this.nodes[index].name}.pid`), 'utf8').trim());
    process.kill(pid, 'SIGKILL');
    await exited;
    fs.rmSync(path.join(this.root, `${this.nodes[index].name}.pid`), { force: true });
  }

  async waitForSize(size: number): Promise<void> {
    await waitFor(`a cluster of ${size}`, 180_000, async () => {
      const rows = (await this.query(0, "SHOW STATUS LIKE 'wsrep_cluster_size'").catch(() => [])) as { Value: string }[];
      return rows[0]?.Value === String(size);
    });
  }

  async stop(): Promise<void> {
    for (const [index, node] of this.nodes.entries()) {
      const child = node.process;
      if (!child || child.exitCode !== null) continue;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      try {
        const pid = Number(fs.readFileSync(path.join(this.root, `${node.name}.pid`), 'utf8').trim());
        process.kill(pid, index === this.nodes.length - 1 ? 'SIGTERM' : 'SIGKILL');
      } catch {
        child.kill('SIGKILL');
      }
      await Promise.race([exited, new Promise((resolve) => setTimeout(resolve, 30_000))]);
    }
  }

  /** The last lines of a node's error log, for a failure message. */
  log(index: number): string {
    try {
      return fs
        .readFileSync(path.join(this.root, `${this.nodes[index].name}.err`), 'utf8')
        .split('\n')
        .slice(-30)
        .join('\n');
    } catch {
      return '';
    }
  }
}
