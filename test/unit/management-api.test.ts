import type { Duplex } from 'node:stream';
import { ApiGatewayManagementApiClient, GetConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import { describe, expect, it } from 'vitest';
import type { WebSocket } from 'ws';
import { inProcessRequestHandler } from '../../lib/local/in-process-handler';
import { MAX_FRAME_BYTES, managementApi, managementResponder, type SocketEntry, textFrame } from '../../lib/local/management-api';

/**
 * The local `@connections` API: API Gateway's rules (410 unknown connection, 413 past 128 KB), its
 * counters and the injected faults, the same whichever way a handler reaches it. Here through the
 * direct transport and through the real SDK client with the in-process request handler, so the
 * SDK's own error mapping is what the assertions see.
 */

const ACCESS_KEY = 'AKIALOCALTEST0000000';

/**
 * Reads one server frame as RFC 6455 section 5.2 lays it out, written here rather than taken from
 * `ws`, so the gateway's own framing is checked by a second reading of the RFC.
 */
function readTextFrame(wire: Buffer): string {
  expect(wire[0]).toBe(0x81); // FIN, text
  const short = (wire[1] as number) & 0x7f;
  expect((wire[1] as number) & 0x80).toBe(0); // a server never masks
  const [length, offset] = short < 126 ? [short, 2] : short === 126 ? [wire.readUInt16BE(2), 4] : [Number(wire.readBigUInt64BE(2)), 10];
  expect(wire.length).toBe(offset + length);
  return wire.subarray(offset).toString('utf8');
}

/** A socket whose connection records the frames written to it: the rules, not `ws`, are under test here. */
function recordingSocket() {
  const sent: string[] = [];
  const closes: number[] = [];
  const socket = { readyState: 1, close: (code: number) => closes.push(code) } as unknown as WebSocket;
  const wire = { write: (frame: Buffer) => sent.push(readTextFrame(frame)) } as unknown as Duplex;
  return { socket, wire, sent, closes };
}

function setUp(faults = {}) {
  const open = recordingSocket();
  const entry: SocketEntry = {
    socket: open.socket,
    wire: open.wire,
    connectedAt: 0,
    lastActiveAt: 0,
    sourceIp: '127.0.0.1',
    userAgent: 'test',
  };
  const api = managementApi(new Map([['open-1', entry]]), ACCESS_KEY, faults);
  const client = (accessKeyId = ACCESS_KEY) =>
    new ApiGatewayManagementApiClient({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      credentials: { accessKeyId, secretAccessKey: 'secret' },
      maxAttempts: 1,
      requestHandler: inProcessRequestHandler(managementResponder(api.request)),
    });
  return { api, open, client };
}

const frame = (text: string) => Buffer.from(text);

describe('the local management API', () => {
  it('frames a post as one unmasked text frame, with the 7-, 16- and 64-bit length forms at their edges', () => {
    for (const length of [0, 125, 126, 0xffff, 0x10000, MAX_FRAME_BYTES]) {
      const payload = 'x'.repeat(length);
      expect(readTextFrame(textFrame(Buffer.from(payload)))).toBe(payload);
    }
  });

  it('writes nothing to a socket that is already closing, and still answers 200 as API Gateway does', async () => {
    // Prepare
    const { api, open } = setUp();
    (open.socket as { readyState: number }).readyState = 2;

    // Act
    await api.transport.post('open-1', frame('{"late":true}'));

    // Assess
    expect(open.sent).toEqual([]);
    expect(api.stats()).toMatchObject({ posts: 1, gone: 0 });
  });

  it('delivers a post to the open socket through the SDK and the direct transport alike, counting both', async () => {
    // Prepare
    const { api, open, client } = setUp();

    // Act
    await client().send(new PostToConnectionCommand({ ConnectionId: 'open-1', Data: frame('{"via":"sdk"}') }));
    await api.transport.post('open-1', frame('{"via":"direct"}'));

    // Assess
    expect(open.sent).toEqual(['{"via":"sdk"}', '{"via":"direct"}']);
    expect(api.stats()).toEqual({ posts: 2, gone: 0, deletes: 0, throttled: 0 });
  });

  it('answers an unknown connection with GoneException on both paths', async () => {
    // Prepare
    const { api, client } = setUp();

    // Act
    const viaSdk = client()
      .send(new PostToConnectionCommand({ ConnectionId: 'closed-1', Data: frame('{}') }))
      .catch((error) => error);
    const direct = api.transport.post('closed-1', frame('{}')).catch((error) => error);

    // Assess
    expect(await viaSdk).toMatchObject({ name: 'GoneException', $metadata: { httpStatusCode: 410 } });
    expect(await direct).toMatchObject({ name: 'GoneException', $metadata: { httpStatusCode: 410 } });
    expect(api.stats()).toMatchObject({ posts: 2, gone: 2 });
  });

  it('posts one frame to many connections in one call under the same rules, telling sent, gone and failed apart', async () => {
    // Prepare
    const { api, open } = setUp();
    const throttled = setUp({ throttleRate: 1 });

    // Act
    const outcome = await api.transport.postMany?.(['open-1', 'closed-1', 'open-1'], frame('{"to":"many"}'));
    const refused = await throttled.api.transport.postMany?.(['open-1'], frame('{}'));

    // Assess
    expect(outcome).toEqual({ sent: 2, gone: ['closed-1'], failed: [] });
    expect(open.sent).toEqual(['{"to":"many"}', '{"to":"many"}']);
    expect(api.stats()).toMatchObject({ posts: 3, gone: 1 });
    expect(refused).toEqual({ sent: 0, gone: [], failed: [{ connectionId: 'open-1', error: 'LimitExceededException' }] });
  });

  it('refuses a frame over 128 KB with PayloadTooLargeException and sends nothing', async () => {
    // Prepare
    const { api, open, client } = setUp();
    const big = Buffer.alloc(MAX_FRAME_BYTES + 1, 0x61);

    // Act
    const viaSdk = client()
      .send(new PostToConnectionCommand({ ConnectionId: 'open-1', Data: big }))
      .catch((error) => error);
    const direct = api.transport.post('open-1', big).catch((error) => error);

    // Assess
    expect(await viaSdk).toMatchObject({ name: 'PayloadTooLargeException' });
    expect(await direct).toMatchObject({ name: 'PayloadTooLargeException' });
    expect(open.sent).toEqual([]);
  });

  it("refuses an SDK client signing with another access key, and answers the runtime's own", async () => {
    // Prepare
    const { client } = setUp();

    // Act
    const stranger = await client('AKIASOMEONEELSE00000')
      .send(new GetConnectionCommand({ ConnectionId: 'open-1' }))
      .catch((error) => error);
    const own = await client().send(new GetConnectionCommand({ ConnectionId: 'open-1' }));

    // Assess
    expect(stranger).toMatchObject({ name: 'UnrecognizedClientException', $metadata: { httpStatusCode: 403 } });
    expect(own.Identity).toEqual({ SourceIp: '127.0.0.1', UserAgent: 'test' });
  });

  it('injects AWS failure modes on demand: throttling, vanished clients and delay', async () => {
    // Prepare
    const throttled = setUp({ throttleRate: 1 });
    const vanished = setUp({ goneRate: 1 });
    const slow = setUp({ jitterMs: 30 });

    // Act
    const limit = await throttled.api.transport.post('open-1', frame('{}')).catch((error) => error);
    const goneAnswer = await vanished
      .client()
      .send(new PostToConnectionCommand({ ConnectionId: 'open-1', Data: frame('{}') }))
      .catch((error) => error);
    await Promise.all(Array.from({ length: 20 }, () => slow.api.transport.post('open-1', frame('{}'))));

    // Assess
    expect(limit).toMatchObject({ name: 'LimitExceededException', $metadata: { httpStatusCode: 429 } });
    expect(throttled.api.stats()).toMatchObject({ throttled: 1 });
    expect(goneAnswer).toMatchObject({ name: 'GoneException' });
    expect(vanished.open.sent).toEqual([]);
    expect(slow.open.sent).toHaveLength(20);
  });
});
