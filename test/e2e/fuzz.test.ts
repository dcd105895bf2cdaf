import { UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rateLimitWindowKey } from '#shared/db/rate-limit-window';
import { type FrameRoute, type HttpRoute, httpRoutes, type RateLimit, webSocketFrames, webSocketRoutes } from '#wiring';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime';
import { malformedJson, oddPathSegment, oddString, oddValue, percentEncodeWtf8 } from '../support/fuzz/arbitraries';
import { apiVocabulary } from '../support/fuzz/discovery';
import { createFixtures, type Fixtures, signJwt } from '../support/fuzz/fixtures';
import { discoverFrame, type FrameCase, frameCases, MAX_FUZZ_FRAME_BYTES, nextNew, probeType, sendFrame } from '../support/fuzz/frames';
import {
  type AuthVariant,
  discoverRoute,
  fixedCases,
  forgedToken,
  type HttpAnswer,
  type HttpCase,
  httpCases,
  REFUSED_AUTH,
  type RouteKnowledge,
  refusedCase,
  sendHttp,
  within,
} from '../support/fuzz/http-cases';
import { isRefusalCounter, type TableChange, TableWatch } from '../support/fuzz/table-watch';
import { repoRoot } from '../support/local-process';
import { seedNotification } from '../support/notifications';
import { RawPusherSocket } from '../support/pusher';
import { connectUser, connectWelcomed, type RoomSocket, tryOpen } from '../support/ws';

/**
 * Every route fuzzed: generated bad input to every HTTP route, the WebSocket handshake and every
 * frame type of the wiring table (`functions/wiring/`), over real sockets, on a runtime of this file's
 * own (so that nothing else writes to its table). Everything a request is built from comes from
 * the table (method, path parameters, auth kind, rate limits, frame types and channels) or is learnt
 * from the route itself (body and query fields, see `test/support/fuzz/discovery.ts`): a new route
 * is fuzzed with no new test code. For every request: never a 5xx, every error answer is
 * `{ error: { code, message } }`, bad credentials get 401, a refusal writes nothing (rate-limit
 * windows and sign-in failure records aside, see `table-watch.ts`), and the runtime still answers afterwards.
 *
 * FUZZ_SEED=<n> replays a run (the seed is printed at the start); FUZZ_RUNS=<n> sets the generated
 * requests per route (default 40, on top of the fixed cases); FUZZ_SHRINK=1 shrinks a failure to a
 * smaller one (slower) instead of stopping at the first.
 */

const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : Math.floor(Math.random() * 2 ** 31);
const RUNS = Number(process.env.FUZZ_RUNS ?? 40);
const SHRINK = process.env.FUZZ_SHRINK === '1';
const OPERATOR_KEY = 'fuzz-operator-key-0123456789abcdef';
/** Per-minute limits well above what one run sends (so the fuzz is not all 429s), low enough to flood in a second. */
const LIMIT_PER_MINUTE = Math.max(300, RUNS * 10);
const LIMIT_PER_SECOND = 200;
/** Error codes that stand for a 5xx on a socket, where there is no status. */
const SERVER_FAULT_CODES = ['internal_error', 'bad_gateway'];

const limitOf = (rateLimit: RateLimit) => ((rateLimit.windowSeconds ?? 60) < 60 ? LIMIT_PER_SECOND : LIMIT_PER_MINUTE);
const rateLimited = [...httpRoutes, ...webSocketFrames].flatMap((entry) => (entry.rateLimit ? [entry.rateLimit] : []));

let runtime: LocalRuntime;
let fx: Fixtures;
let watch: TableWatch;
const vocabulary = apiVocabulary(repoRoot);
const knowledge = new Map<string, RouteKnowledge>();
const stats = { http: 0, handshakes: 0, frames: 0, statuses: new Map<string, number>(), started: Date.now() };
/** Errors nobody caught: in a process of its own, the runtime would have died of each. */
const crashes: unknown[] = [];
const recordCrash = (error: unknown) => crashes.push(error);

const tally = (what: string) => stats.statuses.set(what, (stats.statuses.get(what) ?? 0) + 1);
const countHttp = (answer: HttpAnswer) => {
  stats.http++;
  tally(String(answer.status));
};

beforeAll(async () => {
  console.log(`fuzz seed ${SEED} (replay with FUZZ_SEED=${SEED}), ${RUNS} generated cases per route and frame type`);
  process.on('uncaughtException', recordCrash);
  process.on('unhandledRejection', recordCrash);
  runtime = await startLocalRuntime({
    port: 0,
    // The realtime worker sends the welcome frames; no stream or event consumer runs, so nothing
    // writes to the table except the requests themselves.
    consumers: ['RealtimeWorker'],
    env: {
      CHAT_OPERATOR_KEY: OPERATOR_KEY,
      // The marketplace callback checks signatures (and counts the refused ones) only with its secret set.
      MARKETPLACE_AUDIT_SECRET: 'fuzz-marketplace-signing-secret-0123456789abcdef',
      RATE_LIMIT_MESSAGES_PER_MINUTE: String(LIMIT_PER_MINUTE),
      ...Object.fromEntries(rateLimited.map((rateLimit) => [rateLimit.setting, String(limitOf(rateLimit))])),
    },
  });
  fx = await createFixtures(runtime.baseUrl, OPERATOR_KEY);
  watch = new TableWatch(runtime.dynamoEndpoint, runtime.tableName);
  // No subscriber runs here to make one: a notification of the owner, as the entity writes it.
  const notificationId = await seedNotification(fx.a.projectId, fx.ownerId, {
    client: DynamoDBDocumentClient.from(watch.client),
    tableName: runtime.tableName,
  });
  fx = { ...fx, pool: [...fx.pool, { kind: 'notification', id: notificationId }] };
}, 120_000);

afterAll(async () => {
  const seconds = ((Date.now() - stats.started) / 1000).toFixed(1);
  const statuses = [...stats.statuses.entries()]
    .sort()
    .map(([status, count]) => `${status}×${count}`)
    .join(' ');
  console.log(
    `fuzz seed ${SEED}: ${stats.http} HTTP requests to ${httpRoutes.length} routes, ${stats.handshakes} WebSocket handshakes, ` +
      `${stats.frames} frames of ${webSocketFrames.length} frame types in ${seconds} s (table watch: ${watch?.summary()}); answers ${statuses}`,
  );
  watch?.destroy();
  await runtime?.stop();
  process.off('uncaughtException', recordCrash);
  process.off('unhandledRejection', recordCrash);
}, 60_000);

/** Each property's own seed, derived from the run's: the same draws for every route would miss together. */
const seedFor = (name: string) => [...name].reduce((hash, char) => Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0, SEED >>> 0);
const fcOptions = <T>(name: string, examples: T[] = []) => ({
  seed: seedFor(name),
  numRuns: RUNS + examples.length,
  endOnFailure: !SHRINK,
  examples,
});

const preview = (value: unknown) => {
  const text = typeof value === 'string' ? JSON.stringify(value) : (JSON.stringify(value) ?? String(value));
  return text.length > 300 ? `${text.slice(0, 300)}…` : text;
};

const isErrorShape = (body: any) =>
  typeof body?.error?.code === 'string' && body.error.code.length > 0 && typeof body.error.message === 'string';

/** Writes a refusal made, rate-limit windows and sign-in failure records aside. */
async function refusalWrites(): Promise<TableChange[]> {
  return (await watch.changes()).filter((change) => !isRefusalCounter(change));
}

const describeWrites = (writes: TableChange[]) =>
  writes
    .slice(0, 5)
    .map((change) => `${change.kind} ${change.pk} / ${change.sk}`)
    .join('; ');

/** The runtime answers HTTP, accepts a socket and answers its ping, and nothing went uncaught. */
async function expectServiceUp() {
  const health = await within(10_000, 'GET /health after the fuzz', fetch(`${fx.baseUrl}/health`));
  expect(health.status).toBe(200);
  const socket = await within(
    10_000,
    'a socket after the fuzz',
    connectWelcomed(fx.quietRoom, fx.tokens.member, { history: 0, wsUrl: fx.wsUrl }),
  );
  try {
    const pong = nextNew(socket, (frame) => frame.type === 'pong', 5000);
    socket.send({ type: 'ping' });
    expect((await pong)?.type).toBe('pong');
  } finally {
    await socket.close();
  }
  await watch.settle();
  // The refusal checks read the table's stream; a full scan proves the stream missed nothing.
  await watch.verify();
  expect(crashes.splice(0).map(String)).toEqual([]);
}

/** What is wrong with an HTTP answer, whatever the request was. */
function httpProblems(route: HttpRoute, request: HttpCase, answer: HttpAnswer): string[] {
  const problems: string[] = [];
  if (answer.status >= 500) problems.push(`answered ${answer.status} ${preview(answer.body)}`);
  if (answer.status >= 400 && !isErrorShape(answer.body)) {
    problems.push(`a ${answer.status} whose body is not { error: { code, message } }: ${preview(answer.body)}`);
  }
  if (answer.status === 429 && !(Number(answer.headers.get('retry-after')) >= 1)) {
    problems.push(`a 429 without a Retry-After of 1 s or more: ${answer.headers.get('retry-after')}`);
  }
  if (route.auth !== 'none' && request.routed && REFUSED_AUTH.includes(request.auth) && answer.status !== 401) {
    problems.push(
      `${request.auth} credentials on a route with auth "${route.auth}" answered ${answer.status}, not 401: ${preview(answer.body)}`,
    );
  }
  if (crashes.length > 0) problems.push(`uncaught in the runtime: ${crashes.splice(0).map(String).join('; ')}`);
  return problems;
}

/** Sends one HTTP case and checks the answer and the table; throws naming every problem. */
async function checkHttp(route: HttpRoute, request: HttpCase): Promise<void> {
  await watch.ready();
  const answer = await within(15_000, request.summary, sendHttp(route, fx, request));
  countHttp(answer);
  const problems = httpProblems(route, request, answer);
  if (answer.status >= 400) {
    const writes = await refusalWrites();
    if (writes.length > 0) problems.push(`a ${answer.status} (${answer.body?.error?.code}) wrote to the table: ${describeWrites(writes)}`);
  } else if (route.transport === 'functionUrl') {
    // An accepted stream may go on writing a moment after its answer.
    await watch.settle();
  } else {
    // Accepted: it may have written; handlers write before they answer.
    watch.invalidate();
  }
  if (problems.length > 0) throw new Error(`${request.summary}\n  → ${answer.status} ${preview(answer.body)}\n  ${problems.join('\n  ')}`);
}

const routeById = new Map(httpRoutes.map((route) => [route.id, route]));

async function knowledgeOf(route: HttpRoute): Promise<RouteKnowledge> {
  let known = knowledge.get(route.id);
  if (!known) {
    known = await discoverRoute(route, fx, vocabulary, countHttp);
    knowledge.set(route.id, known);
    await watch.settle();
  }
  return known;
}

describe.each(httpRoutes.map((route) => ({ id: route.id, method: route.method, path: route.path, auth: route.auth })))(
  '$method $path ($id, auth $auth)',
  ({ id }) => {
    it('answers generated bad input with a 4xx in the error shape, 401 to bad credentials, and writes nothing when it refuses', async () => {
      // Prepare
      const route = routeById.get(id) as HttpRoute;
      const known = await knowledgeOf(route);
      const examples = fixedCases(route, fx, known).map((request): [HttpCase] => [request]);

      // Act + Assess
      await fc.assert(
        fc.asyncProperty(httpCases(route, fx, known, vocabulary), (request) => checkHttp(route, request)),
        fcOptions(route.id, examples),
      );
      await expectServiceUp();
    }, 120_000);
  },
);

describe.each(webSocketRoutes.filter((route) => route.routeKey === '$connect').map((route) => ({ id: route.id })))(
  'WebSocket handshake ($id)',
  () => {
    type Token = { readonly auth: AuthVariant; readonly token?: string };

    const tokens = (): fc.Arbitrary<Token> =>
      fc.oneof(
        { weight: 6, arbitrary: fc.constantFrom(fx.tokens.owner, fx.tokens.member).map((token): Token => ({ auth: 'valid', token })) },
        { weight: 1, arbitrary: fc.constant<Token>({ auth: 'missing' }) },
        {
          weight: 2,
          arbitrary: fc
            .oneof(oddString, fc.constant(`${fx.tokens.owner}x`), fc.constant(signJwt(fx.b.signingSecret, { projectId: fx.a.projectId })))
            .map((token): Token => ({ auth: 'malformed', token })),
        },
        {
          weight: 1,
          arbitrary: forgedToken(fx, vocabulary).map(({ token, forged }): Token => ({ auth: forged ? 'forged' : 'malformed', token })),
        },
        { weight: 1, arbitrary: fc.constant<Token>({ auth: 'expired', token: fx.tokens.expired }) },
        { weight: 1, arbitrary: fc.constant<Token>({ auth: 'foreign', token: fx.tokens.foreignOwner }) },
      );

    interface Handshake {
      readonly url: string;
      readonly auth: AuthVariant;
      /** An existing id and well-formed options: only the token can be wrong. */
      readonly routed: boolean;
      readonly summary: string;
    }

    const handshakes = (): fc.Arbitrary<Handshake> => {
      const ids = fc.oneof(
        {
          weight: 3,
          arbitrary: fc.constantFrom(...fx.pool.map((entry) => encodeURIComponent(entry.id))).map((id) => ({ id, existing: true })),
        },
        { weight: 2, arbitrary: oddPathSegment.map((id) => ({ id, existing: false })) },
      );
      type Option = { readonly value?: string; readonly good: boolean };
      const option = (good: readonly string[]): fc.Arbitrary<Option> =>
        fc.oneof(
          { weight: 2, arbitrary: fc.constant<Option>({ good: true }) },
          { weight: 1, arbitrary: fc.constantFrom(...good).map((value): Option => ({ value, good: true })) },
          {
            weight: 2,
            arbitrary: fc
              .oneof(
                fc.constantFrom('101', '-1', '1e3', '', ' 1', 'yes'),
                oddString.filter((value) => percentEncodeWtf8(value).length < 1000),
              )
              .map((value): Option => ({ value, good: good.includes(value) })),
          },
        );
      return fc
        .record({
          form: fc.constantFrom('rooms', 'user', 'query'),
          target: ids,
          token: tokens(),
          history: option(['0', '1', '100']),
          cache: option(['0', '1', 'true', 'false']),
        })
        .map(({ form, target, token, history, cache }) => {
          const query = [
            ...(token.token === undefined ? [] : [`token=${percentEncodeWtf8(token.token)}`]),
            ...(form === 'query' ? [`roomId=${target.id}`] : []),
            ...(history.value === undefined ? [] : [`history=${percentEncodeWtf8(history.value)}`]),
            ...(cache.value === undefined ? [] : [`cache=${percentEncodeWtf8(cache.value)}`]),
          ].join('&');
          const path = form === 'query' ? '/ws' : `/ws/${form}/${target.id}`;
          const url = `${fx.wsUrl}${path}${query ? `?${query}` : ''}`;
          const shown = url.length > 300 ? `${url.slice(0, 240)}… (${url.length})` : url;
          const routed = target.existing && history.good && cache.good;
          return { url, auth: token.auth, routed, summary: `handshake ${shown} [token ${token.auth}]` };
        });
    };

    it('refuses bad handshakes with a 4xx in the error shape, 401 to bad tokens, and writes nothing when it refuses', async () => {
      // Act + Assess
      await fc.assert(
        fc.asyncProperty(handshakes(), async (handshake) => {
          await watch.ready();
          const outcome = await within(15_000, handshake.summary, tryOpen(handshake.url)).catch((error: Error) => error);
          stats.handshakes++;
          const problems: string[] = [];
          if (outcome instanceof Error) {
            tally('ws:reset');
            problems.push(`the handshake failed without an answer: ${outcome.message}`);
          } else if (outcome.open) {
            tally('ws:101');
            await outcome.socket.close();
            await watch.settle();
          } else {
            tally(`ws:${outcome.status}`);
            if (outcome.status >= 500) problems.push(`answered ${outcome.status}`);
            if (!isErrorShape(outcome.body))
              problems.push(`a ${outcome.status} whose body is not { error: { code, message } }: ${preview(outcome.body)}`);
            // A request line past the gateway's 16 KB head limit is refused (431) before any token is read.
            const headTooLarge = outcome.status === 431 && handshake.url.length > 16 * 1024;
            if (handshake.routed && REFUSED_AUTH.includes(handshake.auth) && outcome.status !== 401 && !headTooLarge) {
              problems.push(`${handshake.auth} token answered ${outcome.status}, not 401`);
            }
            const writes = await refusalWrites();
            if (writes.length > 0) problems.push(`a refused handshake (${outcome.status}) wrote to the table: ${describeWrites(writes)}`);
          }
          if (problems.length > 0) {
            const answer = outcome instanceof Error || outcome.open ? '' : ` → ${outcome.status} ${preview(outcome.body)}`;
            throw new Error(`${handshake.summary}${answer}\n  ${problems.join('\n  ')}`);
          }
        }),
        fcOptions('$connect'),
      );
      await expectServiceUp();
    }, 120_000);
  },
);

describe('WebSocket frames', () => {
  let room: RoomSocket;
  let observer: RoomSocket;
  let user: RoomSocket;
  const sockets = () => [room, observer, user];

  beforeAll(async () => {
    const options = { history: 0, wsUrl: fx.wsUrl };
    room = await connectWelcomed(fx.quietRoom, fx.tokens.owner, options);
    observer = await connectWelcomed(fx.quietRoom, fx.tokens.member, options);
    user = await connectUser(fx.ownerId, fx.tokens.owner, options);
    await watch.settle();
  }, 30_000);
  afterAll(async () => {
    await Promise.all(sockets().map((socket) => socket?.close()));
  });

  /** What is wrong with the answer to a frame. */
  function frameProblems(answer: Awaited<ReturnType<typeof sendFrame>>, sender: RoomSocket): string[] {
    const problems: string[] = [];
    const { answer: frame, relayed } = answer;
    if (!frame && !relayed) {
      const recent = (socket: RoomSocket) => `${socket.isOpen ? 'open' : 'closed'}, last frames ${preview(socket.frames.slice(-3))}`;
      problems.push(
        `no answer within 5 s (an error frame, ack or pong, or the relay of a client event); sender ${recent(sender)}; observer ${recent(observer)}`,
      );
    }
    if (frame?.type === 'error') {
      if (!isErrorShape(frame)) problems.push(`an error frame without { error: { code, message } }: ${preview(frame)}`);
      if (SERVER_FAULT_CODES.includes(frame.error?.code)) problems.push(`a server fault: ${preview(frame)}`);
      if (frame.error?.code === 'rate_limited' && !(frame.retryAfter >= 1))
        problems.push(`rate_limited without retryAfter: ${preview(frame)}`);
    }
    if (!sender.isOpen) problems.push('the socket closed');
    if (crashes.length > 0) problems.push(`uncaught in the runtime: ${crashes.splice(0).map(String).join('; ')}`);
    return problems;
  }

  async function checkFrame(frame: FrameCase): Promise<void> {
    const sender = frame.channel === 'room' ? room : user;
    await watch.ready();
    const answer = await sendFrame(sender, frame.channel === 'room' ? observer : undefined, frame);
    stats.frames++;
    tally(
      answer.answer?.type === 'error'
        ? `frame:${answer.answer.error?.code}`
        : answer.relayed
          ? 'frame:relayed'
          : `frame:${answer.answer?.type ?? 'no answer'}`,
    );
    const problems = frameProblems(answer, sender);
    if (answer.answer?.type === 'error') {
      const writes = await refusalWrites();
      if (writes.length > 0) problems.push(`a refused frame (${answer.answer.error?.code}) wrote to the table: ${describeWrites(writes)}`);
    } else {
      await watch.settle();
    }
    if (problems.length > 0) throw new Error(`${frame.summary}\n  → ${preview(answer.answer ?? 'nothing')}\n  ${problems.join('\n  ')}`);
  }

  const allTypes = webSocketFrames.map(probeType);

  describe.each(webSocketFrames.map((frame) => ({ type: frame.type, channels: frame.channels.join(', ') })))(
    'type $type (channels: $channels)',
    ({ type }) => {
      const route = webSocketFrames.find((frame) => frame.type === type) as FrameRoute;

      it('answers every refused frame with an error frame with a code, keeps the socket and writes nothing', async () => {
        // Prepare
        const { shape, seeds } = await discoverFrame(route, room, observer, {
          vocabulary,
          strings: fx.strings,
          sent: () => stats.frames++,
        });
        await watch.settle();

        // Act + Assess
        await fc.assert(
          fc.asyncProperty(frameCases(route, shape, allTypes, fx.strings, vocabulary, seeds), checkFrame),
          fcOptions(route.type),
        );
        for (const socket of sockets()) expect(socket.isOpen).toBe(true);
        await expectServiceUp();
      }, 120_000);

      it('closes a socket that sends a frame over 128 KB with 1009, and stays up', async () => {
        // Prepare
        const socket = await connectWelcomed(fx.quietRoom, fx.tokens.owner, { history: 0, wsUrl: fx.wsUrl });

        // Act
        socket.send(JSON.stringify({ type: probeType(route), content: 'x'.repeat(128 * 1024) }));
        const closed = await within(10_000, 'the close of a socket sent an oversize frame', socket.closed);
        stats.frames++;

        // Assess
        expect(closed.code).toBe(1009);
        await expectServiceUp();
      }, 30_000);

      it('closes a socket that sends a text frame of invalid UTF-8 with 1007, and stays up', async () => {
        // Prepare
        const socket = await connectWelcomed(fx.quietRoom, fx.tokens.owner, { history: 0, wsUrl: fx.wsUrl });
        const prefix = Buffer.from(`{"type":${JSON.stringify(probeType(route))},"content":"`);

        // Act
        socket.socket.send(Buffer.concat([prefix, Buffer.from([0xc3, 0x28, 0xff]), Buffer.from('"}')]), { binary: false });
        const closed = await within(10_000, 'the close of a socket sent invalid UTF-8', socket.closed);
        stats.frames++;

        // Assess
        expect(closed.code).toBe(1007);
        await expectServiceUp();
      }, 30_000);
    },
  );
});

describe('Pusher-protocol sockets (/app/<key>)', () => {
  /** What a Pusher socket may be answered: the protocol's replies, never a native frame or a server fault. */
  const ANSWERS = new Set(['pusher:error', 'pusher:pong', 'pusher:subscription_error', 'pusher_internal:subscription_succeeded']);
  const channels = () =>
    fc.oneof(
      fc.constantFrom(`private-room-${fx.quietRoom}`, `presence-room-${fx.quietRoom}`, `private-cache-room-${fx.rooms.foreign}`),
      fc.constantFrom('private-room-', 'presence-room-a#b', 'private-encrypted-room-x', 'room-x', ''),
      oddString,
    );
  /** Below the frame limit: a bigger frame closes the socket with 1009, which the native frame suites test on their own. */
  const pusherFrames = () =>
    fc
      .oneof(
        { weight: 1, arbitrary: malformedJson },
        {
          weight: 6,
          arbitrary: fc
            .record(
              {
                event: fc.oneof(
                  fc.constantFrom('pusher:subscribe', 'pusher:unsubscribe', 'pusher:ping', 'pusher:signin', 'client-typing', 'client-'),
                  oddString,
                ),
                channel: channels(),
                data: fc.oneof(
                  fc.record(
                    {
                      channel: channels(),
                      auth: fc.oneof(oddString, fc.constant('key:00')),
                      channel_data: fc.oneof(oddString, fc.constant('{"user_id":"u"}')),
                    },
                    { requiredKeys: [] },
                  ),
                  oddValue(vocabulary),
                ),
              },
              { requiredKeys: ['event'] },
            )
            .map((frame) => JSON.stringify(frame)),
        },
      )
      .filter((text) => Buffer.byteLength(text) <= MAX_FUZZ_FRAME_BYTES);

  it('answers whatever a socket sends with protocol frames, keeps it open, and stays up', async () => {
    // Prepare
    const created = await fetch(`${fx.baseUrl}/admin/pusher-app`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-service-api-key': fx.a.apiKey },
      body: '{}',
    });
    expect(created.status).toBe(201);
    const socket = await RawPusherSocket.open((await created.json()).key, undefined, fx.baseUrl);
    await socket.socketId();

    // Act
    await fc.assert(
      fc.asyncProperty(pusherFrames(), async (text) => {
        socket.send(text);
        await socket.settle();
        stats.frames++;
        if (crashes.length > 0) throw new Error(`${preview(text)}: uncaught in the runtime: ${crashes.splice(0).map(String).join('; ')}`);
      }),
      fcOptions('pusher frames'),
    );
    await socket.settle();

    // Assess
    const unexpected = socket.frames.slice(1).filter((frame) => !ANSWERS.has(frame.event));
    expect(unexpected).toEqual([]);
    const faults = socket.frames.filter((frame) => frame.event === 'pusher:error' && frame.data?.code === 4302);
    expect(faults).toEqual([]);
    expect(socket.socket.readyState).toBe(socket.socket.OPEN);
    await socket.close();
    // The app, the socket and its close wrote to the table: the next test's refusal checks start after them.
    await watch.settle();
    await expectServiceUp();
  }, 120_000);
});

describe('rate limits of the wiring table', () => {
  const limitedRoutes = httpRoutes.filter((route) => route.rateLimit);
  const limitedFrames = webSocketFrames.filter((frame) => frame.rateLimit);

  it.each(limitedRoutes.map((route) => ({ id: route.id, per: route.rateLimit?.per })))(
    '$id (per $per): past the limit, a 429 in the error shape with Retry-After, and nothing written',
    async ({ id }) => {
      // Prepare
      const route = routeById.get(id) as HttpRoute;
      const known = await knowledgeOf(route);
      const request = refusedCase(route, fx, known);
      const limit = limitOf(route.rateLimit as RateLimit);
      await watch.settle();

      // Act: in parallel batches until refused, at most three times the limit: a flood that crosses a
      // window's end splits between two windows, and a slow route's (an export under CI load) can
      // leave each of them at the limit exactly after twice the limit.
      const answers: HttpAnswer[] = [];
      while (answers.length < 3 * limit && !answers.some((answer) => answer.status === 429)) {
        answers.push(...(await Promise.all(Array.from({ length: 25 }, () => sendHttp(route, fx, request)))));
      }
      for (const answer of answers) countHttp(answer);

      // Assess
      const refused = answers.filter((answer) => answer.status === 429);
      const tally = new Map<number, number>();
      for (const answer of answers) tally.set(answer.status, (tally.get(answer.status) ?? 0) + 1);
      const statuses = [...tally].map(([status, count]) => `${status}×${count}`).join(' ');
      expect(refused.length, `no 429 after ${answers.length} requests (${statuses})`).toBeGreaterThan(0);
      for (const answer of refused) {
        expect(answer.body).toMatchObject({ error: { code: 'rate_limited', message: expect.any(String) } });
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      expect(
        answers.filter((answer) => answer.status >= 500 || (answer.status >= 400 && !isErrorShape(answer.body))).map((a) => a.status),
      ).toEqual([]);
      expect(describeWrites(await refusalWrites())).toBe('');
    },
    60_000,
  );

  it.each(limitedFrames.map((frame) => ({ type: frame.type, per: frame.rateLimit?.per })))(
    'frames $type (per $per): past the limit, error frames rate_limited with retryAfter',
    async ({ type }) => {
      // Prepare
      const route = webSocketFrames.find((frame) => frame.type === type) as FrameRoute;
      const limit = limitOf(route.rateLimit as RateLimit);
      const socket = await connectWelcomed(fx.quietRoom, fx.tokens.owner, { history: 0, wsUrl: fx.wsUrl });

      try {
        // Arrange: each of the next 30 windows one frame short of the limit (the limiter's own keys), so
        // two real frames in one window pass it however slowly a loaded machine handles them: three
        // times the limit sent at once can otherwise spread over windows of a second, each within it.
        const socketId = socket.ofType('connected')[0]?.socketId;
        expect(socketId, 'the welcome names the socket').toEqual(expect.any(String));
        const rateLimit = route.rateLimit as RateLimit;
        const currentWindow = Math.floor(Date.now() / 1000 / (rateLimit.windowSeconds ?? 60));
        await spendWindows(fx.a.projectId, rateLimit, String(socketId), limit - 1, currentWindow, 30);

        // Act: three times the limit at once
        const refusal = nextNew(socket, (frame) => frame.type === 'error' && frame.error?.code === 'rate_limited', 20_000);
        for (let i = 0; i < 3 * limit; i++) socket.send({ type: probeType(route) });
        stats.frames += 3 * limit;

        // Assess
        expect(await refusal, 'no rate_limited error frame').toBeDefined();
        for (const frame of socket.ofType('error')) {
          expect(frame).toMatchObject({ error: { code: 'rate_limited', message: expect.any(String) } });
          expect(frame.retryAfter).toBeGreaterThanOrEqual(1);
        }
        expect(socket.isOpen).toBe(true);
      } finally {
        await socket.close();
      }
      await expectServiceUp();
    },
    60_000,
  );
});

/**
 * Sets the counters of `windows` windows of a limit, from window number `first`, for one key to
 * `count` (the limiter's own keys).
 */
async function spendWindows(
  projectId: string,
  rateLimit: Pick<RateLimit, 'bucket' | 'windowSeconds'>,
  key: string,
  count: number,
  first: number,
  windows = 1,
) {
  const windowSeconds = rateLimit.windowSeconds ?? 60;
  for (let window = first; window < first + windows; window++) {
    const itemKey = rateLimitWindowKey(projectId, rateLimit.bucket, key, window);
    await watch.client.send(
      new UpdateItemCommand({
        TableName: runtime.tableName,
        Key: { pk: { S: itemKey.pk }, sk: { S: itemKey.sk } },
        UpdateExpression: 'SET #count = :count, #ttl = :ttl',
        ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
        ExpressionAttributeValues: { ':count': { N: String(count) }, ':ttl': { N: String((window + 2) * windowSeconds) } },
      }),
    );
  }
}

/** Spends a user's whole message budget of one window by setting its counter. */
const spendMessageWindow = (userId: string, window: number) =>
  spendWindows(fx.a.projectId, { bucket: 'messages' }, `user:${userId}`, LIMIT_PER_MINUTE, window);

describe("the message pipeline's limit (RATE_LIMIT_MESSAGES_PER_MINUTE)", () => {
  it('past the limit, POST /messages, POST /rooms/{roomId}/messages and a message frame are refused with nothing written', async () => {
    // Prepare: a user of its own spends the rest of the minute's budget with real messages, from a
    // counter set a batch short of the limit (this window's and the next's, should the spend cross
    // into it): the whole budget in real messages took over 300 of them, about 3 s.
    const userId = `limited-${SEED}`;
    await spendWindows(fx.a.projectId, { bucket: 'messages' }, `user:${userId}`, LIMIT_PER_MINUTE - 25, Math.floor(Date.now() / 60_000), 2);
    const tokenAnswer = await fetch(`${fx.baseUrl}/auth/token`, {
      method: 'POST',
      headers: { 'x-service-api-key': fx.a.apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ userId, roles: ['member'] }),
    });
    const { token } = (await tokenAnswer.json()) as { token: string };
    const post = (path: string, body: Record<string, unknown>) =>
      fetch(`${fx.baseUrl}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then(async (response) => ({ status: response.status, body: (await response.json()) as any, headers: response.headers }));
    const roomPath = `/rooms/${fx.rooms.public}/messages`;
    let statuses: number[] = [];
    let refusal: { status: number; headers: Headers } | undefined;
    while (statuses.length < 3 * LIMIT_PER_MINUTE && !refusal) {
      const batch = await Promise.all(Array.from({ length: 25 }, (_, i) => post(roomPath, { content: `spend ${statuses.length + i}` })));
      statuses = [...statuses, ...batch.map((answer) => answer.status)];
      refusal = batch.find((answer) => answer.status === 429);
    }
    stats.http += statuses.length;
    expect(statuses.filter((status) => status !== 201 && status !== 429)).toEqual([]);
    expect(refusal, `no refusal after ${statuses.length} messages`).toBeDefined();
    // The Act may cross into the next fixed window (on a loaded machine the spend can end in the
    // window's last seconds), so the next window's budget is spent as well, by its counter.
    await spendMessageWindow(userId, Math.floor(Date.now() / 60_000) + 1);
    const socket = await connectWelcomed(fx.rooms.public, token, { history: 0, wsUrl: fx.wsUrl });
    await watch.settle();

    try {
      // Act
      const refusedFrame = nextNew(socket, (frame) => frame.type === 'error', 10_000);
      socket.send({ type: 'message', content: 'refused frame', clientMessageId: `refused-frame-${SEED}` });
      const answers = [
        await post('/messages', { roomId: fx.rooms.public, content: 'refused', clientMessageId: `refused-${SEED}` }),
        await post(roomPath, { content: 'refused too', clientMessageId: `refused-too-${SEED}` }),
      ];
      const frame = await refusedFrame;
      stats.http += 2;
      stats.frames++;

      // Assess
      for (const answer of answers) {
        expect(answer).toMatchObject({ status: 429, body: { error: { code: 'rate_limited', message: expect.any(String) } } });
        expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
      expect(frame).toMatchObject({ error: { code: 'rate_limited' } });
      expect(describeWrites(await refusalWrites())).toBe('');
    } finally {
      await socket.close();
    }
  }, 90_000);
});
