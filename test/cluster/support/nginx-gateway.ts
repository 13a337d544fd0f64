import { ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { waitFor } from './ports';

/**
 * nginx round-robin in front of the instances, as the README shows it: a request that could not reach one
 * instance (connection refused, a 503 to an idempotent request) goes to the next; git and uploads stream.
 */
export class NginxGateway {
  private child?: ChildProcess;

  constructor(
    private readonly root: string,
    readonly port: number,
    private readonly upstreams: number[],
  ) {}

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  static available(): boolean {
    return fs.existsSync('/usr/sbin/nginx');
  }

  async start(): Promise<void> {
    fs.mkdirSync(this.root, { recursive: true });
    const conf = path.join(this.root, 'nginx.conf');
    fs.writeFileSync(
      conf,
      `daemon off;
worker_processes 1;
pid ${this.root}/nginx.pid;
error_log ${this.root}/error.log info;
events { worker_connections 2048; }
http {
  access_log off;
  client_body_temp_path ${this.root}/body;
  proxy_temp_path ${this.root}/proxy;
  fastcgi_temp_path ${this.root}/fastcgi;
  uwsgi_temp_path ${this.root}/uwsgi;
  scgi_temp_path ${this.root}/scgi;
  upstream anvil {
${this.upstreams.map((port) => `    server 127.0.0.1:${port} max_fails=1 fail_timeout=2s;`).join('\n')}
  }
  server {
    listen 127.0.0.1:${this.port};
    client_max_body_size 0;
    location / {
      proxy_pass http://anvil;
      proxy_set_header Host $http_host;
      proxy_connect_timeout 2s;
      proxy_read_timeout 300s;
      proxy_buffering off;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 3;
      # Which instances a request went to (several when it was passed on), for the tests and a failure's message.
      add_header X-Upstream $upstream_addr always;
    }
  }
}
`,
    );
    this.child = spawn('/usr/sbin/nginx', ['-c', conf, '-p', this.root], { stdio: 'ignore' });
    await waitFor('nginx', 30_000, async () => (await fetch(`${this.url}/api/healthz`)).status > 0);
  }

  /** nginx's error log (upstreams it could not reach, retries), for a failure's message. */
  errorLog(): string {
    try {
      return fs.readFileSync(path.join(this.root, 'error.log'), 'utf8').slice(-20_000);
    } catch {
      return '';
    }
  }

  async stop(): Promise<void> {
    if (!this.child || this.child.exitCode !== null) return;
    const exited = new Promise((resolve) => this.child!.once('exit', resolve));
    this.child.kill('SIGTERM');
    await exited;
  }
}
