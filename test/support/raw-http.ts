import * as net from 'node:net';
import type { TestApp } from './test-app';

/** Starts the test app on a free port (port 0) and answers its address, for tests that need raw sockets. */
export async function listen(t: TestApp): Promise<{ host: string; port: number }> {
  await t.app.listen(0, '127.0.0.1');
  const address = t.app.getHttpServer().address() as net.AddressInfo;
  return { host: '127.0.0.1', port: address.port };
}

export interface RawExchange {
  /** Everything the server sent before it closed or the exchange was ended. */
  received(): string;
  /** Resolves with the status line's code as soon as a status line has arrived. */
  status(): Promise<number>;
  /** Resolves when the server closes the connection. */
  closed(): Promise<void>;
  socket: net.Socket;
}

/** Opens a connection and writes `head` (request line and headers); the body, if any, is the caller's to send. */
export function rawRequest(address: { host: string; port: number }, head: string): RawExchange {
  const socket = net.connect(address.port, address.host);
  let text = '';
  const waiters: (() => void)[] = [];
  socket.setEncoding('latin1');
  socket.on('data', (chunk: string) => {
    text += chunk;
    waiters.splice(0).forEach((wake) => wake());
  });
  socket.on('error', () => undefined);
  const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
  socket.write(head);
  return {
    socket,
    received: () => text,
    closed: () => closed,
    status: () =>
      new Promise<number>((resolve, reject) => {
        const check = () => {
          const match = /^HTTP\/1\.1 (\d{3})/.exec(text);
          if (match) return resolve(Number(match[1]));
          waiters.push(check);
        };
        closed.then(() => reject(new Error(`connection closed without a status line: ${JSON.stringify(text)}`)));
        check();
      }),
  };
}
