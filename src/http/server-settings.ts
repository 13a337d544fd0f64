import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { HttpConfig } from '../config/slices';

// Why: Node's default timeouts and unlimited connections do not suit life behind a gateway.

/**
 * Timeouts and connection caps for life behind a gateway. Node's default keep-alive timeout (5 s) is shorter
 * than a gateway's idle timeout (commonly 60 s): the gateway would reuse a connection the server is closing
 * and answer 502. Headers must arrive within headersTimeout, which Node requires to exceed the keep-alive
 * timeout; a whole request within requestTimeout; and one client address may hold only so many connections,
 * so that slow clients cannot take every socket.
 */
const BUSY_BODY = JSON.stringify({ message: 'the server has too many connections; try again later' });
const BUSY_ANSWER = [
  'HTTP/1.1 503 Service Unavailable',
  'Content-Type: application/json;charset=utf-8',
  `Content-Length: ${Buffer.byteLength(BUSY_BODY)}`,
  'Retry-After: 2',
  'Connection: close',
  '',
  BUSY_BODY,
].join('\r\n');

export function applyHttpServerSettings(server: Server, config: HttpConfig): void {
  server.keepAliveTimeout = config.keepAliveTimeoutMs;
  server.headersTimeout = config.headersTimeoutMs;
  server.requestTimeout = config.requestTimeoutMs;
  const perClient = new Map<string, number>();
  let open = 0;
  server.on('connection', (socket: Socket) => {
    // Over HTTP_MAX_CONNECTIONS a client gets an answer it can act on, not the reset of a dropped socket
    // (Node's own server.maxConnections drops it): the 503 is written at once and the connection closed.
    if (config.maxConnections > 0 && open >= config.maxConnections) {
      // Closed at once rather than after the client's FIN: under a burst the server accepts every waiting
      // connection in one go, and each refused one holding its descriptor until then would exhaust them
      // (past which accept fails and the kernel resets the rest without an answer).
      socket.on('error', () => undefined);
      socket.write(BUSY_ANSWER);
      socket.destroySoon();
      return;
    }
    open += 1;
    socket.once('close', () => (open -= 1));
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
