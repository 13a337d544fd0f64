import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpServerConfig } from '../config/config';

/**
 * Timeouts and connection caps for life behind a gateway. Node's default keep-alive timeout (5 s) is shorter
 * than a gateway's idle timeout (commonly 60 s): the gateway would reuse a connection the server is closing
 * and answer 502. Headers must arrive within headersTimeout, which Node requires to exceed the keep-alive
 * timeout; a whole request within requestTimeout; and one client address may hold only so many connections,
 * so that slow clients cannot take every socket.
 */
export function applyHttpServerSettings(server: Server, config: HttpServerConfig): void {
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  server.headersTimeout = config.headersTimeoutMs;
  server.requestTimeout = config.requestTimeoutMs;
  if (config.maxConnections > 0) server.maxConnections = config.maxConnections;
  const perClient = new Map<string, number>();
  server.on('connection', (socket: Socket) => {
    const address = socket.remoteAddress ?? '';
    const count = (perClient.get(address) ?? 0) + 1;
    if (count > config.maxConnectionsPerClient) {
      socket.destroy();
      return;
    }
    perClient.set(address, count);
    socket.once('close', () => {
      const left = (perClient.get(address) ?? 1) - 1;
      if (left <= 0) perClient.delete(address);
      else perClient.set(address, left);
    });
  });
}
