import type { Socket } from 'node:net';
// The transport's thread is plain JavaScript (ssh-transport.worker.js); its helper is exported for this test.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { coalesceWrites } = require('./ssh-transport.worker.js') as { coalesceWrites: (socket: Socket) => void };

describe('coalesceWrites', () => {
  it('sends the packets of one turn of the event loop in one corked write, in order, and the next turn again', async () => {
    const calls: string[] = [];
    const socket = {
      write: (data: string) => (calls.push(`write ${data}`), true),
      cork: () => calls.push('cork'),
      uncork: () => calls.push('uncork'),
    };
    coalesceWrites(socket as unknown as Socket);
    expect([socket.write('a'), socket.write('b'), socket.write('c')]).toEqual([true, true, true]);
    expect(calls).toEqual(['cork', 'write a', 'write b', 'write c']);
    await new Promise((resolve) => process.nextTick(resolve));
    socket.write('d');
    await new Promise((resolve) => process.nextTick(resolve));
    expect(calls).toEqual(['cork', 'write a', 'write b', 'write c', 'uncork', 'cork', 'write d', 'uncork']);
  });
});
