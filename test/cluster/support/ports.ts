import * as net from 'node:net';

/** Below the kernel's ephemeral range (32768 and up here): ports it never hands out for outgoing connections. */
const LOW = 20000;
const HIGH = 32767;

function tryListen(port: number): Promise<net.Server | null> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => resolve(server));
  });
}

/**
 * `count` distinct ports free on 127.0.0.1 now (each bound once and let go). They are taken below the ephemeral
 * range: a port the kernel chose for a `listen(0)` is also one it may give, moments later, to another process's
 * outgoing connection (a busy CI round opens thousands), which then holds it when the instance starts.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  const ports: number[] = [];
  for (let attempt = 0; ports.length < count && attempt < 10_000; attempt++) {
    const port = LOW + Math.floor(Math.random() * (HIGH - LOW + 1));
    if (ports.includes(port)) continue;
    const server = await tryListen(port);
    if (!server) continue;
    servers.push(server);
    ports.push(port);
  }
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  if (ports.length < count) throw new Error(`no ${count} free ports between ${LOW} and ${HIGH}`);
  return ports;
}

/** Polls `check` until it answers true; fails after `limitMs` (a ceiling for a hung start, not a speed test). */
export async function waitFor(what: string, limitMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + limitMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
