/**
 * Post-deploy smoke test: one pass through what a client does, against a running service (deployed
 * or local), each step timed and bounded by `--timeout`:
 *
 *   CHAT_SMOKE_API_KEY=ck_... npm run smoke -- <BaseUrl>
 *   CHAT_SMOKE_API_KEY=ck_... npm run smoke -- <HttpApiUrl> --ws-url <WebSocketUrl> --stream-url <SseUrl>   (edge: false)
 *   npm run smoke -- http://127.0.0.1:8787 --api-key ck_demo_...
 *
 * Steps: health, project (only without an API key), token, room, message, websocket, ping, message
 * frame, sse, cleanup. Exit code 0 when all passed; 1 at the first failure, after cleaning up what
 * the run created; 2 for bad usage. See docs/operations.md, "After deploy: smoke test".
 */
import { randomBytes } from 'node:crypto';
import { parseArgs } from 'node:util';
import { type Frame, type RoomSocket, tryOpen } from '../lib/room-socket';
import { SseParser } from '../sdk/sse-parser';
import { sseStreamUrl } from '../sdk/sse-transport';
import { webSocketUrl } from '../sdk/websocket-connect';

const usage = `usage: npm run smoke -- <base URL> [options]
  <base URL>            the service (BaseUrl output; HttpApiUrl with edge: false) or the local runtime; default CHAT_URL
  --api-key <key>       API key of the project to test in (env CHAT_SMOKE_API_KEY)
  --operator-key <key>  without an API key: create a throwaway project (env CHAT_OPERATOR_KEY)
  --ws-url <url>        legacy (edge: false): the WebSocket API (WebSocketUrl output); default <base URL>/ws/rooms/<roomId>
  --stream-url <url>    legacy (edge: false): the SSE function URL (SseUrl output); default <base URL>
  --timeout <ms>        limit of each step (default 15000)
  --json                one JSON report on stdout instead of a line per step`;

function usageError(message: string): never {
  console.error(`${message}\n${usage}`);
  process.exit(2);
}

function parseOptions() {
  try {
    return parseArgs({
      allowPositionals: true,
      options: {
        'api-key': { type: 'string' },
        'operator-key': { type: 'string' },
        'ws-url': { type: 'string' },
        'stream-url': { type: 'string' },
        timeout: { type: 'string', default: '15000' },
        json: { type: 'boolean', default: false },
        help: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    return usageError((error as Error).message);
  }
}

const { values: options, positionals } = parseOptions();
if (options.help) usageError('Post-deploy smoke test of the chat service.');
const withoutSlash = (url: string) => url.replace(/\/+$/, '');
const baseUrl = withoutSlash(positionals[0] ?? process.env.CHAT_URL ?? usageError('Give the base URL of the service.'));
const streamUrl = withoutSlash(options['stream-url'] ?? baseUrl);
const wsUrl = options['ws-url'];
const timeoutMs = Number(options.timeout);
if (!Number.isInteger(timeoutMs) || timeoutMs <= 0) usageError(`--timeout must be a positive number of ms, not ${options.timeout}`);
let apiKey = options['api-key'] || process.env.CHAT_SMOKE_API_KEY || undefined;
const operatorKey = options['operator-key'] || process.env.CHAT_OPERATOR_KEY || undefined;
if (!apiKey && !operatorKey)
  usageError('Give a project API key (CHAT_SMOKE_API_KEY or --api-key) or the operator key (CHAT_OPERATOR_KEY).');

/** Names what this run creates, so an operator can tell its leftovers apart (rooms cannot be deleted). */
const runId = `smoke-${new Date().toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15)}-${randomBytes(3).toString('hex')}`;
const roomId = runId;
const senderId = 'smoke-sender';
const receiverId = 'smoke-receiver';

interface StepReport {
  readonly step: string;
  readonly ok: boolean;
  readonly ms: number;
  readonly detail?: string;
  readonly error?: string;
}

/** A step's time budget: `signal` aborts its requests, `left()` bounds its waits for frames. */
interface StepContext {
  readonly signal: AbortSignal;
  left(): number;
}

class StepFailure extends Error {}

const reports: StepReport[] = [];
/** What cleanup undoes or names. */
const sockets: RoomSocket[] = [];
let roomCreated = false;
let createdProjectId: string | undefined;

function report(entry: StepReport): void {
  reports.push(entry);
  if (options.json) return;
  const line = `${entry.ok ? '✓' : '✗'} ${entry.step.padEnd(13)} ${String(entry.ms).padStart(6)} ms  ${entry.ok ? (entry.detail ?? '') : entry.error}`;
  console.log(line.trimEnd());
}

/** Runs one step within `timeoutMs` and reports it; throws {@link StepFailure} when it failed. */
async function step(name: string, run: (context: StepContext) => Promise<string>): Promise<void> {
  const started = performance.now();
  const deadline = Date.now() + timeoutMs;
  const context: StepContext = { signal: AbortSignal.timeout(timeoutMs), left: () => Math.max(1, deadline - Date.now()) };
  let timer: NodeJS.Timeout | undefined;
  // A backstop a little later than the step's own waits, so their more precise message wins.
  const backstop = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no result within ${timeoutMs} ms`)), timeoutMs + 500);
  });
  try {
    const detail = await Promise.race([run(context), backstop]);
    report({ step: name, ok: true, ms: Math.round(performance.now() - started), detail });
  } catch (error) {
    const message = (error as Error).message;
    report({ step: name, ok: false, ms: Math.round(performance.now() - started), error: message });
    throw new StepFailure(`${name}: ${message}`);
  } finally {
    clearTimeout(timer);
  }
}

type Credential = { readonly token: string } | { readonly apiKey: string } | { readonly operatorKey: string };

function headersOf(credential: Credential): Record<string, string> {
  if ('token' in credential) return { authorization: `Bearer ${credential.token}` };
  if ('apiKey' in credential) return { 'x-service-api-key': credential.apiKey };
  return { 'x-service-operator-key': credential.operatorKey };
}

/** Why a request got no answer: the timeout, else the network error's own code (ECONNREFUSED, ENOTFOUND, ...). */
function failureReason(error: unknown): string {
  const { name, message, cause } = error as Error & { cause?: { code?: string; message?: string } };
  if (name === 'TimeoutError' || name === 'AbortError') return `no answer within ${timeoutMs} ms`;
  return cause?.code ?? cause?.message ?? message;
}

/** The service's `{error:{code,message}}`, else the start of whatever a gateway answered with. */
function errorOf(body: string): string {
  try {
    const { error } = JSON.parse(body) as { error?: { code?: string; message?: string } };
    if (error?.code) return `${error.code}: ${error.message ?? ''}`;
  } catch {
    // Not JSON: a gateway's page.
  }
  return body.slice(0, 200);
}

async function call(
  context: StepContext,
  method: string,
  path: string,
  credential: Credential | undefined,
  expected: readonly number[],
  body?: unknown,
): Promise<any> {
  const headers = credential ? headersOf(credential) : {};
  if (body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${baseUrl}${path}`, {
      method,
      headers,
      signal: context.signal,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    text = await response.text();
  } catch (error) {
    throw new Error(`${method} ${baseUrl}${path} failed: ${failureReason(error)}`);
  }
  if (!expected.includes(response.status)) throw new Error(`${method} ${path} answered ${response.status} ${errorOf(text)}`);
  try {
    return text ? JSON.parse(text) : undefined;
  } catch {
    throw new Error(`${method} ${path} answered ${response.status} with something else than JSON: ${text.slice(0, 200)}`);
  }
}

/** The first frame matching `predicate`, or a failure naming what was awaited and the frame types that came instead. */
async function awaitFrame(context: StepContext, socket: RoomSocket, what: string, predicate: (frame: Frame) => boolean): Promise<Frame> {
  try {
    return await socket.next(predicate, context.left());
  } catch {
    const seen = socket.frames.map((frame) => frame.type).join(', ') || 'nothing';
    throw new Error(`no ${what} within ${timeoutMs} ms (received: ${seen})`);
  }
}

async function openRoomSocket(context: StepContext, token: string, restMessageId: number): Promise<RoomSocket> {
  const url = webSocketUrl({ baseUrl, wsUrl, roomId, cache: false }, token, 5);
  const shownUrl = url.replace(/token=[^&]+/, 'token=…');
  const handshake = await tryOpen(url).catch((error: Error) => {
    throw new Error(`WebSocket ${shownUrl} failed: ${failureReason(error)}`);
  });
  if (!handshake.open) {
    const body = typeof handshake.body === 'string' ? handshake.body : JSON.stringify(handshake.body ?? '');
    throw new Error(`WebSocket ${shownUrl} refused with ${handshake.status} ${errorOf(body)}`);
  }
  sockets.push(handshake.socket);
  await awaitFrame(context, handshake.socket, 'connected frame', (frame) => frame.type === 'connected');
  await awaitFrame(context, handshake.socket, 'subscription_succeeded frame', (frame) => frame.type === 'subscription_succeeded');
  await awaitFrame(
    context,
    handshake.socket,
    `history frame holding message ${restMessageId}`,
    (frame) => frame.type === 'history' && frame.messages?.some((message: { id?: unknown }) => message.id === restMessageId),
  );
  return handshake.socket;
}

/** Reads the room's SSE stream from just after `afterId` until the message `wantedId` arrives. */
async function streamDelivers(context: StepContext, token: string, afterId: number, wantedId: number): Promise<void> {
  // As the SDK asks for it: the token in the query, which CloudFront's signing to the function URL leaves alone.
  const streamAt = sseStreamUrl({ sseUrl: streamUrl, roomId }, token);
  const url = streamAt.replace(/token=[^&]*/, 'token=…');
  const reading = new AbortController();
  try {
    const response = await fetch(streamAt, {
      headers: { accept: 'text/event-stream', 'last-event-id': String(afterId) },
      signal: AbortSignal.any([context.signal, reading.signal]),
    }).catch((error: unknown) => {
      throw new Error(`GET ${url} failed: ${failureReason(error)}`);
    });
    if (!response.ok || !response.headers.get('content-type')?.includes('text/event-stream') || !response.body) {
      throw new Error(`GET ${url} answered ${response.status} ${errorOf(await response.text())}`);
    }
    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    for (;;) {
      const { value, done } = await reader.read().catch((error: unknown) => {
        throw new Error(context.signal.aborted ? `no message ${wantedId} on ${url} within ${timeoutMs} ms` : failureReason(error));
      });
      if (done) throw new Error(`${url} ended before message ${wantedId}`);
      for (const event of parser.push(value)) {
        if (event.event === 'message' && (JSON.parse(event.data) as { id?: unknown }).id === wantedId) return;
      }
    }
  } finally {
    reading.abort();
  }
}

async function smoke(): Promise<void> {
  await step('health', async (context) => {
    const health = await call(context, 'GET', '/health', undefined, [200]);
    if (health?.status !== 'ok') throw new Error(`GET /health says ${JSON.stringify(health)}`);
    return `ok, DynamoDB answered in ${health.dependencies?.dynamodb?.latencyMs ?? '?'} ms`;
  });
  if (!apiKey) {
    await step('project', async (context) => {
      const project = await call(context, 'POST', '/platform/projects', { operatorKey: operatorKey as string }, [201], {
        name: `Smoke test ${runId}`,
        projectId: runId,
      });
      apiKey = project.apiKey as string;
      createdProjectId = project.projectId as string;
      return `created ${createdProjectId}`;
    });
  }
  const service = { apiKey: apiKey as string };
  const tokens = { sender: '', receiver: '' };
  await step('token', async (context) => {
    tokens.sender = (await call(context, 'POST', '/auth/token', service, [201], { userId: senderId })).token;
    tokens.receiver = (await call(context, 'POST', '/auth/token', service, [201], { userId: receiverId })).token;
    return `${senderId}, ${receiverId}`;
  });
  await step('room', async (context) => {
    await call(context, 'POST', '/rooms', { token: tokens.sender }, [201], {
      id: roomId,
      type: 'group',
      name: 'Smoke test',
      members: [receiverId],
    });
    roomCreated = true;
    return roomId;
  });
  let restMessageId = 0;
  await step('message', async (context) => {
    const body = { roomId, content: `smoke test ${runId} over REST`, clientMessageId: `${runId}-rest` };
    restMessageId = (await call(context, 'POST', '/messages', { token: tokens.sender }, [201], body)).id;
    return `id ${restMessageId}`;
  });
  let sender: RoomSocket | undefined;
  let receiver: RoomSocket | undefined;
  await step('websocket', async (context) => {
    [sender, receiver] = await Promise.all([
      openRoomSocket(context, tokens.sender, restMessageId),
      openRoomSocket(context, tokens.receiver, restMessageId),
    ]);
    return '2 sockets: connected, subscription_succeeded, history with the message';
  });
  await step('ping', async (context) => {
    const socket = sender as RoomSocket;
    socket.send({ type: 'ping' });
    await awaitFrame(context, socket, 'pong', (frame) => frame.type === 'pong');
    return 'pong';
  });
  let frameMessageId = 0;
  await step('message frame', async (context) => {
    const clientMessageId = `${runId}-frame`;
    (sender as RoomSocket).send({ type: 'message', content: `smoke test ${runId} over WebSocket`, clientMessageId });
    const answer = await awaitFrame(
      context,
      sender as RoomSocket,
      'ack',
      (frame) => (frame.type === 'ack' || frame.type === 'error') && frame.clientMessageId === clientMessageId,
    );
    if (answer.type === 'error') throw new Error(`the frame was refused: ${answer.error?.code}: ${answer.error?.message}`);
    frameMessageId = answer.message.id;
    await awaitFrame(
      context,
      receiver as RoomSocket,
      `broadcast of message ${frameMessageId}`,
      (frame) => frame.type === 'message' && frame.message?.id === frameMessageId,
    );
    return `ack and broadcast of id ${frameMessageId}`;
  });
  await step('sse', async (context) => {
    await streamDelivers(context, tokens.receiver, restMessageId, frameMessageId);
    return `id ${frameMessageId} from ${streamUrl}`;
  });
}

/**
 * Closes the sockets and takes both users out of the room. Rooms, messages and projects have no
 * delete route: the room (and a project the run created) stay, named by the run id.
 */
async function cleanup(): Promise<void> {
  await step('cleanup', async (context) => {
    await Promise.all(sockets.map((socket) => socket.close()));
    const done = sockets.length > 0 ? [`${sockets.length} sockets closed`] : [];
    if (roomCreated && apiKey) {
      for (const userId of [receiverId, senderId]) {
        await call(context, 'DELETE', `/rooms/${encodeURIComponent(roomId)}/members/${userId}`, { apiKey }, [204, 404]);
      }
      done.push('2 memberships removed');
    }
    const kept = [...(roomCreated ? [`room ${roomId}`] : []), ...(createdProjectId ? [`project ${createdProjectId}`] : [])];
    if (kept.length > 0) done.push(`${kept.join(' and ')} kept (no delete route)`);
    return done.join('; ') || 'nothing was created';
  });
}

const started = performance.now();
let failure: string | undefined;
if (!options.json) {
  console.log(`Smoke test ${runId} of ${baseUrl} (WebSocket: ${wsUrl ?? 'same host'}, SSE: ${streamUrl})`);
}
try {
  await smoke();
} catch (error) {
  failure = error instanceof StepFailure ? error.message : `unexpected: ${(error as Error).stack}`;
}
try {
  await cleanup();
} catch (error) {
  failure ??= (error as Error).message;
}
const totalMs = Math.round(performance.now() - started);
if (options.json) console.log(JSON.stringify({ ok: failure === undefined, runId, baseUrl, totalMs, steps: reports }, null, 2));
if (failure) {
  console.error(`Smoke test FAILED at ${failure}`);
  process.exit(1);
}
if (!options.json) console.log(`Smoke test passed in ${totalMs} ms`);
// Sockets and streams may still be winding down; the verdict is in.
process.exit(0);
