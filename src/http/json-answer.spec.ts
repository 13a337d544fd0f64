import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import fc from 'fast-check';
import { expressMessageClasses, jsonBytes } from './json-answer';

describe('expressMessageClasses', () => {
  it('makes requests and responses with the application prototypes, still IncomingMessage and ServerResponse', () => {
    const app = express();
    const { IncomingMessage, ServerResponse } = expressMessageClasses(app);
    const request = new IncomingMessage(null as never);
    const response = new ServerResponse(request);
    expect(Object.getPrototypeOf(request)).toBe(app.request);
    expect(Object.getPrototypeOf(response)).toBe(app.response);
    expect(request).toBeInstanceOf(http.IncomingMessage);
    expect(response).toBeInstanceOf(http.ServerResponse);
    expect(response.statusCode).toBe(200);
  });

  it('serves Express through a server built with them, and Express changes no prototype on the way', async () => {
    const app = express();
    const seen: { requestProto: boolean; responseProto: boolean; changed: number }[] = [];
    let changed = 0;
    app.get('/probe', (request, response) => {
      seen.push({ requestProto: Object.getPrototypeOf(request) === app.request, responseProto: Object.getPrototypeOf(response) === app.response, changed });
      response.status(201).json({ host: request.get('host'), path: request.path });
    });
    const server = http.createServer(expressMessageClasses(app), app);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const setPrototypeOf = Object.setPrototypeOf;
    // Counts the prototype changes that actually change something (Express calls it on every request).
    Object.setPrototypeOf = ((target: object, proto: object | null) => {
      if (Object.getPrototypeOf(target) !== proto) changed++;
      return setPrototypeOf(target, proto);
    }) as typeof Object.setPrototypeOf;
    try {
      const { port } = server.address() as AddressInfo;
      for (let i = 0; i < 3; i++) {
        const answer = await fetch(`http://127.0.0.1:${port}/probe`);
        expect(answer.status).toBe(201);
        expect(await answer.json()).toEqual({ host: `127.0.0.1:${port}`, path: '/probe' });
      }
    } finally {
      Object.setPrototypeOf = setPrototypeOf;
      await new Promise((resolve) => server.close(resolve));
    }
    expect(seen).toEqual([
      { requestProto: true, responseProto: true, changed: 0 },
      { requestProto: true, responseProto: true, changed: 0 },
      { requestProto: true, responseProto: true, changed: 0 },
    ]);
  });
});

describe('jsonBytes', () => {
  it('is the UTF-8 of the JSON text and a newline, for any value (one-byte, two-byte and astral text, lone surrogates)', () => {
    fc.assert(
      fc.property(
        fc.jsonValue({ maxDepth: 3 }),
        fc.string({ unit: 'binary' }),
        fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((unit) => String.fromCharCode(unit)) }),
        (value, text, units) => {
          for (const answer of [
            value,
            { text, units, value },
            [units, text],
            [value, undefined, () => 1, Symbol('s'), new Date(0), null, [value]],
            [],
            [, value, ,],
          ]) {
            expect(jsonBytes(answer).equals(Buffer.from(`${JSON.stringify(answer)}\n`, 'utf8'))).toBe(true);
          }
        },
      ),
    );
  });

  it('encodes a frozen answer once and gives the same bytes again; anything else is encoded each time', () => {
    const shared = Object.freeze([Object.freeze({ id: 1, title: 'kept' })]);
    const first = jsonBytes(shared);
    expect(jsonBytes(shared)).toBe(first);
    expect(first.toString()).toBe('[{"id":1,"title":"kept"}]\n');
    const open = [{ id: 1, title: 'changing' }];
    const before = jsonBytes(open);
    open[0].title = 'changed';
    expect(jsonBytes(open)).not.toBe(before);
    expect(jsonBytes(open).toString()).toBe('[{"id":1,"title":"changed"}]\n');
  });
});
