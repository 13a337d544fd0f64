import * as net from 'node:net';

/** `count` distinct ports free on 127.0.0.1 now (each bound once and let go). */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  const ports: number[] = [];
  for (let index = 0; index < count; index++) {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    servers.push(server);
    ports.push((server.address() as net.AddressInfo).port);
  }
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
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
