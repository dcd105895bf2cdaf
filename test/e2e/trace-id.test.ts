import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, clientOf, createTestProject, newGroupRoom, uniqueId } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { eventually, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';
import { connectWelcomed } from '../support/ws';

/**
 * One `X-Trace-Id` followed end to end (docs/operations.md, "Trace ids"): a runtime of its own
 * (`npm start` as a child process, consumers on, debug logs on its stdout, which is where Lambda's
 * log lines go too), a message sent with the id, and the id looked for in the log lines of the
 * HTTP handler, of the webhook dispatcher (the consumer of the event the message's outbox carried),
 * of the webhook attempts (the first, and the retry the state machine runs), in the receiver's
 * `X-Trace-Id` header and in the delivery record. Then error bodies: a 4xx and a WebSocket error
 * frame carry the trace id too. Lines are told apart by their messages: locally every function
 * shares one process and one logger, so a line's Lambda context and appended keys may be another
 * invocation's (the trace id comes from the request context, which is not shared).
 */

const OPERATOR_KEY = 'trace-id-operator-key-0123456789';

let local: LocalProcess;
let call: ReturnType<typeof clientOf>;
let receiver: WebhookReceiver;

beforeAll(async () => {
  local = await startLocalProcess({
    args: ['--in-memory'],
    env: { CHAT_OPERATOR_KEY: OPERATOR_KEY, POWERTOOLS_LOG_LEVEL: 'DEBUG', WEBHOOK_RETRY_TIME_SCALE: '0.0005' },
  });
  call = clientOf(local.baseUrl);
  receiver = await startWebhookReceiver({ behaviour: 'error' });
}, 60_000);
afterAll(async () => {
  await receiver?.close();
  await local?.stop();
});

/** The runtime's structured log lines (Powertools' JSON), in the order written. */
function logLines(): Record<string, unknown>[] {
  return local
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .flatMap((line) => {
      try {
        return [JSON.parse(line) as Record<string, unknown>];
      } catch {
        return [];
      }
    });
}

describe('one X-Trace-Id', () => {
  it('follows a message through the handler, the outbox consumer, the webhook attempts, the receiver and the delivery record', async () => {
    // Prepare
    const created = await call('/platform/projects', { body: { name: 'trace' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
    const { apiKey } = created.body as { apiKey: string };
    const registered = await call('/webhooks/register', { apiKey, body: { url: receiver.url, eventTypes: ['message.created'] } });
    expect(registered.status).toBe(201);
    receiver.secret = registered.body.secret;
    const userId = uniqueId('author');
    const token = (await call('/auth/token', { apiKey, body: { userId } })).body.token as string;
    const roomId = uniqueId('room');
    expect((await call('/rooms', { token, body: { id: roomId, type: 'group', members: [] } })).status).toBe(201);
    const traceId = `e2e-${randomUUID()}`;

    // Act: the receiver refuses the first attempt, so the retry state machine makes the second.
    const sent = await call(`/rooms/${roomId}/messages`, { token, body: { content: 'traced' }, headers: { 'x-trace-id': traceId } });
    await receiver.waitForRequests(1);
    receiver.behaviour = 'ok';
    const requests = await receiver.waitForRequests(2);
    const delivery = await eventually('the delivery to be delivered', async () => {
      const listed = await call('/admin/webhooks/deliveries?limit=10', { apiKey });
      const found = (listed.body.deliveries as { status: string; traceId: string | null }[])[0];
      return found?.status === 'delivered' && found;
    });
    const lines = await eventually('the attempts to be logged', async () => {
      const traced = logLines().filter((line) => line.traceId === traceId);
      return traced.filter((line) => line.message === 'webhook attempt').length >= 2 && traced;
    });

    // Assess
    expect(sent.status).toBe(201);
    expect(sent.headers.get('x-trace-id')).toBe(traceId);
    // The HTTP pipeline's own line (locally every function shares one logger, so its Lambda context is not the route's).
    expect(lines).toContainEqual(expect.objectContaining({ message: 'request answered', status: 201 }));
    // The webhook dispatcher, the queue consumer of the event the message item carried out (its own line).
    expect(lines).toContainEqual(
      expect.objectContaining({ message: 'event dispatched to webhooks', type: 'message.created', deliveries: 1 }),
    );
    expect(lines.filter((line) => line.message === 'webhook attempt').map((line) => line.status)).toEqual(['pending', 'delivered']);
    // The retry ran in the state machine's task, whose log keys name the delivery.
    expect(lines).toContainEqual(
      expect.objectContaining({ message: 'webhook attempt', status: 'delivered', deliveryId: expect.any(String) }),
    );
    expect(requests.map((request) => request.headers['x-trace-id'])).toEqual([traceId, traceId]);
    expect(delivery.traceId).toBe(traceId);
  });

  it('is made up by the service when the client sends none, or one that is not sane', async () => {
    // Act
    const none = await call('/health');
    const forged = await call('/health', { headers: { 'x-trace-id': 'x"}{"level":"ERROR' } });

    // Assess
    expect(none.headers.get('x-trace-id')).toMatch(/^[A-Za-z0-9._:=-]{1,128}$/);
    expect(forged.headers.get('x-trace-id')).not.toContain('"');
  });
});

describe('every error body carries the trace id', () => {
  it('on a 4xx of the HTTP API', async () => {
    // Prepare
    const traceId = `e2e-${randomUUID()}`;

    // Act
    const refused = await api('/rooms', { body: { id: 'r' }, headers: { 'x-trace-id': traceId } });

    // Assess
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ error: { code: 'missing_credentials', message: expect.any(String), traceId } });
  });

  it('on an error frame of the WebSocket API', async () => {
    // Prepare
    const project = await createTestProject('trace-frames');
    const { owner, roomId } = await newGroupRoom(project);
    const socket = await connectWelcomed(roomId, owner.token, { history: 0 });

    // Act
    socket.send({ type: 'message', roomId: 'another-room', content: 'hello', clientMessageId: 'c-1' });
    socket.send({ type: 'no-such-frame' });
    const refusals = [
      await socket.next((frame) => frame.type === 'error' && frame.clientMessageId === 'c-1'),
      await socket.next((frame) => frame.type === 'error' && (frame.error as { code?: string }).code === 'unsupported_frame'),
    ];
    await socket.close();

    // Assess
    for (const refusal of refusals) expect(refusal.error).toMatchObject({ code: expect.any(String), traceId: expect.any(String) });
  });
});
