import fc from 'fast-check';
import type { HttpMethod, HttpRoute } from '#wiring';
import { clientOf, readAnswer } from '../api';
import { openSse } from '../sse';
import {
  base64url,
  deepJson,
  headerString,
  hugeJson,
  invalidUtf8,
  malformedJson,
  oddPathSegment,
  oddString,
  oddValue,
  percentEncodeWtf8,
  toJsonText,
} from './arbitraries';
import {
  corrupt,
  corruption,
  type Detail,
  discoverShape,
  emptyShape,
  mutatedObject,
  type ProbeAnswer,
  repairObject,
  type Shape,
} from './discovery';
import { type Fixtures, type PoolEntry, signJwt } from './fixtures';

/**
 * HTTP requests of the fuzz suite, derived from one wiring-table entry: its method, its path and
 * path parameters, its auth kind and (learnt by {@link discoverRoute}) its body and query fields.
 */

/** How the request authenticates. `forged` tokens carry A's valid signature over odd claims. */
export type AuthVariant = 'valid' | 'missing' | 'malformed' | 'expired' | 'foreign' | 'forged';

/** Credentials that must earn a 401 on any route that authenticates. */
export const REFUSED_AUTH: readonly AuthVariant[] = ['missing', 'malformed', 'expired'];

export interface HttpCase {
  readonly method: string;
  /** Path and query, encoded as sent. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string | Uint8Array;
  readonly auth: AuthVariant;
  /** The route's own method, with every path parameter an existing id: the gateway hands it to the route's handler. */
  readonly routed: boolean;
  /** One line saying what the case is, for failure reports (bodies can be megabytes). */
  readonly summary: string;
}

export interface HttpAnswer {
  readonly status: number;
  readonly body: any;
  readonly headers: Headers;
}

/** What the suite learnt about one route before fuzzing it. */
export interface RouteKnowledge {
  /** An existing id per path parameter that passes its validation (the first candidate when none does). */
  readonly params: Readonly<Record<string, string>>;
  readonly body: Shape;
  /** Bodies validation let through (with only the required fields, and with all), found by `repairObject`. */
  readonly seeds: readonly Record<string, unknown>[];
  readonly query: readonly string[];
}

const BODYLESS: readonly string[] = ['GET', 'HEAD'];
/**
 * Longest encoded path or query the cases send. Node's HTTP parser refuses a request head over
 * 16 KB with a bare 431 before the gateway sees it (API Gateway has limits of its own, answered by
 * API Gateway), so path, query and headers each stay under a quarter of that.
 */
export const MAX_URL_PART = 4000;
const METHODS: readonly HttpMethod[] = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

export const paramNames = (route: HttpRoute) => [...route.path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);

const fillPath = (route: HttpRoute, values: Readonly<Record<string, string>>) =>
  route.path.replace(/\{(\w+)\}/g, (_match, name: string) => values[name] ?? '');

/** The credentials a route's auth kind accepts, as headers; several when it accepts several. */
function validAuth(route: HttpRoute, fx: Fixtures): Record<string, string>[] {
  switch (route.auth) {
    case 'none':
      return [{}];
    case 'operator':
      return [{ 'x-service-operator-key': fx.operatorKey }];
    case 'apiKey':
      return [{ 'x-service-api-key': fx.a.apiKey }];
    case 'user':
      return [bearer(fx.tokens.owner), bearer(fx.tokens.member)];
    case 'userOrService':
      return [bearer(fx.tokens.owner), { 'x-service-api-key': fx.a.apiKey }, bearer(fx.tokens.member)];
  }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Credentials that were good once: an expired JWT, a rotated API key, an old operator key. */
function expiredAuth(route: HttpRoute, fx: Fixtures): Record<string, string>[] {
  switch (route.auth) {
    case 'apiKey':
      return [{ 'x-service-api-key': fx.rotatedApiKey }];
    case 'user':
      return [bearer(fx.tokens.expired)];
    case 'operator':
      return [{ 'x-service-operator-key': `${fx.operatorKey.slice(0, -4)}old!` }];
    default:
      return [bearer(fx.tokens.expired), { 'x-service-api-key': fx.rotatedApiKey }];
  }
}

/** Good credentials of the other project (or, on operator routes, a tenant's). */
function foreignAuth(route: HttpRoute, fx: Fixtures): Record<string, string>[] {
  if (route.auth === 'operator') return [{ 'x-service-api-key': fx.a.apiKey }, bearer(fx.tokens.owner)];
  return [bearer(fx.tokens.foreignOwner), ...(route.auth === 'user' ? [] : [{ 'x-service-api-key': fx.b.apiKey }])];
}

/** A JWT-shaped token whose claims are odd: signed by A, by B over A's project, unsigned, or with a foreign algorithm. */
export function forgedToken(fx: Fixtures, vocabulary: readonly string[]) {
  const claim = fc.oneof(oddValue(vocabulary), fc.constant(undefined));
  return fc
    .record({
      projectId: fc.oneof(fc.constant(fx.a.projectId), oddString, fc.constant('p'.repeat(3000)), claim),
      userId: fc.oneof(fc.constant(fx.ownerId), oddString, claim),
      roles: fc.oneof(fc.constant(['owner']), fc.constant(['root']), claim),
      exp: fc.oneof(fc.constant(Math.floor(Date.now() / 1000) + 3600), fc.constant(1e20), fc.constant('tomorrow'), claim),
      signer: fc.constantFrom('a', 'b', 'none', 'HS512', 'RS256'),
    })
    .map(({ signer, ...claims }) => {
      if (signer === 'a') return { token: signJwt(fx.a.signingSecret, claims), forged: true };
      if (signer === 'b') return { token: signJwt(fx.b.signingSecret, claims), forged: false };
      return { token: signJwt(fx.a.signingSecret, claims, { alg: signer, typ: 'JWT' }), forged: false };
    })
    .filter(({ token }) => token.length <= MAX_URL_PART + 2000);
}

/** Headers for each way of (not) authenticating, by the route's auth kind. */
function authArbitrary(route: HttpRoute, fx: Fixtures, vocabulary: readonly string[]) {
  type Auth = { readonly auth: AuthVariant; readonly headers: Record<string, string> };
  const header = (name: string) => (value: string) => ({ [name]: value });
  const badBearer = fc.oneof(
    headerString.map((value) => ({ authorization: value })),
    headerString.map((value) => ({ authorization: `Bearer ${value}` })),
    fc
      .constantFrom('Bearer', 'Bearer ', 'Basic dXNlcjpwYXNz', `Bearer ${fx.tokens.owner}x`, `Bearer ${fx.tokens.owner.slice(0, -2)}`)
      .map(header('authorization')),
    fc.constant({ authorization: `Bearer ${fx.tokens.owner.split('.').slice(0, 2).join('.')}` }),
  );
  const badApiKey = fc.oneof(
    headerString.map(header('x-service-api-key')),
    fc
      .constantFrom(
        `${fx.a.apiKey}x`,
        fx.a.apiKey.slice(0, -1),
        `ck_${fx.a.projectId}_${'x'.repeat(32)}`,
        `ck_${fx.b.projectId}_${fx.a.apiKey.slice(`ck_${fx.a.projectId}_`.length)}`,
        `ck_${'a'.repeat(63)}_${'x'.repeat(20)}`,
        `${fx.a.apiKey}, ${fx.a.apiKey}`,
        `${fx.a.apiKey} x`,
      )
      .map(header('x-service-api-key')),
  );
  const badOperator = fc.oneof(
    headerString.map(header('x-service-operator-key')),
    fc.constantFrom(`${fx.operatorKey}x`, fx.operatorKey.slice(0, -1), fx.operatorKey.toUpperCase()).map(header('x-service-operator-key')),
  );
  const malformed: fc.Arbitrary<Record<string, string>> =
    route.auth === 'user'
      ? badBearer
      : route.auth === 'apiKey'
        ? badApiKey
        : route.auth === 'operator'
          ? badOperator
          : route.auth === 'userOrService'
            ? fc.oneof(badBearer, badApiKey)
            : fc.oneof(badBearer, badApiKey, badOperator);
  return fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom(...validAuth(route, fx)).map((headers): Auth => ({ auth: 'valid', headers })) },
    { weight: 1, arbitrary: fc.constant<Auth>({ auth: 'missing', headers: {} }) },
    { weight: 2, arbitrary: malformed.map((headers): Auth => ({ auth: 'malformed', headers })) },
    { weight: 1, arbitrary: fc.constantFrom(...expiredAuth(route, fx)).map((headers): Auth => ({ auth: 'expired', headers })) },
    { weight: 1, arbitrary: fc.constantFrom(...foreignAuth(route, fx)).map((headers): Auth => ({ auth: 'foreign', headers })) },
    {
      weight: 1,
      arbitrary: forgedToken(fx, vocabulary).map(
        ({ token, forged }): Auth => ({ auth: forged ? 'forged' : 'malformed', headers: bearer(token) }),
      ),
    },
  );
}

/** Each path parameter an existing id (URL-encoded) or an odd segment; sometimes a path the table does not have. */
function pathArbitrary(route: HttpRoute, fx: Fixtures, known: RouteKnowledge) {
  const names = paramNames(route);
  const segment = (name: string) =>
    fc.oneof(
      { weight: 3, arbitrary: fc.constant({ value: encodeURIComponent(known.params[name] ?? ''), existing: true }) },
      { weight: 2, arbitrary: fc.constantFrom(...fx.pool).map((entry) => ({ value: encodeURIComponent(entry.id), existing: true })) },
      { weight: 3, arbitrary: oddPathSegment.map((value) => ({ value, existing: false })) },
      {
        weight: 2,
        arbitrary: fc
          .tuple(fc.constantFrom(...fx.pool), corruption)
          .map(([entry, [chars, at]]) => ({ value: percentEncodeWtf8(String(corrupt(entry.id, chars, at))), existing: false })),
      },
    );
  const shapes = fc.oneof(
    { weight: 12, arbitrary: fc.constant('as is') },
    { weight: 1, arbitrary: fc.constantFrom('trailing slash', 'double slash', 'other method') },
  );
  return fc
    .tuple(fc.tuple(...names.map(segment)), shapes, fc.constantFrom(...METHODS.filter((method) => method !== route.method)))
    .map(([segments, shape, otherMethod]) => {
      const values = Object.fromEntries(names.map((name, i) => [name, segments[i]?.value ?? '']));
      let path = fillPath(route, values);
      if (shape === 'trailing slash') path = `${path}/`;
      if (shape === 'double slash') path = path.replace('/', '//');
      return {
        path,
        method: shape === 'other method' ? otherMethod : route.method,
        routed: shape === 'as is' && segments.every((s) => s.existing),
      };
    });
}

/** A query string: none, learnt or documented names with odd values, or raw odd text. */
function queryArbitrary(known: RouteKnowledge, vocabulary: readonly string[]) {
  const names = known.query.length > 0 ? known.query : ['limit'];
  const pair = fc.tuple(
    fc.oneof({ weight: 3, arbitrary: fc.constantFrom(...names) }, { weight: 1, arbitrary: fc.constantFrom(...vocabulary) }),
    fc.oneof(
      fc.constantFrom('1', '0', '-1', '100', '101', '1e309', '99999999999999999999', '1.5', '', 'null', '0x10', ' 1', 'public'),
      oddString,
    ),
  );
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant('') },
    {
      weight: 3,
      arbitrary: fc
        .array(pair, { minLength: 1, maxLength: 3 })
        .map((pairs) => `?${pairs.map(([name, value]) => `${name}=${percentEncodeWtf8(value)}`).join('&')}`)
        .filter((query) => query.length <= MAX_URL_PART),
    },
    { weight: 1, arbitrary: fc.constantFrom('?%zz=1', '?limit=%FF', '?=x', '?&&&', '?limit', '?limit=1&limit=2', '?token=', '?#frag') },
  );
}

type Body = { readonly body?: string | Uint8Array; readonly contentType?: string; readonly summary: string };

const describeText = (text: string) =>
  text.length > 160 ? `${JSON.stringify(text.slice(0, 120))}… (${text.length} characters)` : JSON.stringify(text);

/** Bodies of every JSON type, mutated objects of the learnt shape, text that is not JSON, huge and deep values, bytes that are not UTF-8. */
function bodyArbitrary(known: RouteKnowledge, fx: Fixtures, vocabulary: readonly string[]): fc.Arbitrary<Body> {
  const text = (arbitrary: fc.Arbitrary<string>) => arbitrary.map((body): Body => ({ body, summary: `body ${describeText(body)}` }));
  const body = fc.oneof(
    { weight: 1, arbitrary: fc.constant<Body>({ summary: 'no body' }) },
    { weight: 3, arbitrary: text(oddValue(vocabulary).map(toJsonText)) },
    { weight: 8, arbitrary: text(mutatedObject(known.body, fx.strings, vocabulary, known.seeds).map(toJsonText)) },
    { weight: 2, arbitrary: text(malformedJson) },
    { weight: 1, arbitrary: text(fc.oneof(deepJson, hugeJson).map(toJsonText)) },
    {
      weight: 1,
      arbitrary: invalidUtf8.map((bytes): Body => ({ body: bytes, summary: `body bytes ${Buffer.from(bytes).toString('hex')}` })),
    },
  );
  const contentType = fc.oneof(
    { weight: 10, arbitrary: fc.constant('application/json') },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        'text/plain',
        'application/octet-stream',
        'application/json; charset=utf-16',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
      ),
    },
  );
  return fc
    .tuple(body, contentType)
    .map(([b, type]) => (b.body === undefined ? b : { ...b, contentType: type, summary: `${b.summary} as ${type}` }));
}

/** Every request the suite may send to a route. */
export function httpCases(route: HttpRoute, fx: Fixtures, known: RouteKnowledge, vocabulary: readonly string[]): fc.Arbitrary<HttpCase> {
  return fc
    .tuple(
      authArbitrary(route, fx, vocabulary),
      pathArbitrary(route, fx, known),
      queryArbitrary(known, vocabulary),
      bodyArbitrary(known, fx, vocabulary),
    )
    .map(([auth, target, query, body]): HttpCase => {
      const sendsBody = !BODYLESS.includes(target.method) && body.body !== undefined;
      const headers = { ...auth.headers, ...(sendsBody && body.contentType ? { 'content-type': body.contentType } : {}) };
      const shownHeaders = Object.entries(auth.headers)
        .map(([name, value]) => `${name}: ${value.length > 80 ? `${value.slice(0, 60)}… (${value.length})` : value}`)
        .join(', ');
      const path = `${target.path}${query}`;
      return summarised({
        method: target.method,
        path,
        headers,
        ...(sendsBody ? { body: body.body } : {}),
        auth: auth.auth,
        routed: target.routed,
        summary: `${target.method} ${path.length > 300 ? `${path.slice(0, 240)}… (${path.length})` : path} [auth ${auth.auth}${
          shownHeaders ? `: ${shownHeaders}` : ''
        }] ${sendsBody ? body.summary : 'no body'}`,
      });
    });
}

/** Reports show the summary, not a body of megabytes. */
function summarised(request: HttpCase): HttpCase {
  return Object.defineProperty(request, fc.toStringMethod, { value: () => request.summary, enumerable: false });
}

/**
 * Cases every run sends, whatever the seed: {@link nearValidCases}; each JSON type, text that is not
 * JSON, 100 000 levels of nesting, a body over 1 MiB and bytes that are not UTF-8 (with good
 * credentials); each way of failing to authenticate; odd values of each path parameter.
 */
export function fixedCases(route: HttpRoute, fx: Fixtures, known: RouteKnowledge): HttpCase[] {
  return [...nearValidCases(route, fx, known), ...badCases(route, fx, known)];
}

/**
 * Requests validation lets through, aimed at each existing thing in turn: the learnt seeds (a body
 * without one is none), with every id of one kind in the path and the body (the group room's id
 * wherever the seed names a room) replaced by each id of that kind. They reach the domain code,
 * whose refusals (not found, not a member, not allowed) come after reads and, unless correct, writes.
 */
export function nearValidCases(route: HttpRoute, fx: Fixtures, known: RouteKnowledge): HttpCase[] {
  const kindOf = new Map(fx.pool.map((entry) => [entry.id, entry.kind]));
  const headers = {
    ...(validAuth(route, fx)[0] ?? {}),
    ...(BODYLESS.includes(route.method) ? {} : { 'content-type': 'application/json' }),
  };
  // The fullest seed first: its refusals come latest, after whatever the request did before them.
  const seeds =
    BODYLESS.includes(route.method) || known.seeds.length === 0
      ? [undefined]
      : [...known.seeds].sort((x, y) => Object.keys(y).length - Object.keys(x).length);
  const swap = (value: unknown, kind: string, id: string): unknown => {
    if (typeof value === 'string') return kindOf.get(value) === kind ? id : value;
    if (Array.isArray(value)) return value.map((item) => swap(item, kind, id));
    return value;
  };
  const cases: HttpCase[] = [];
  for (const seed of seeds) {
    const slots = [...Object.values(known.params), ...Object.values(seed ?? {})].flat();
    const kinds = new Set(slots.flatMap((value) => (typeof value === 'string' && kindOf.has(value) ? [kindOf.get(value) as string] : [])));
    for (const kind of kinds) {
      for (const entry of fx.pool.filter((candidate) => candidate.kind === kind)) {
        const params = Object.fromEntries(
          Object.entries(known.params).map(([name, id]) => [name, encodeURIComponent(swap(id, kind, entry.id) as string)]),
        );
        const body = seed && Object.fromEntries(Object.entries(seed).map(([name, value]) => [name, swap(value, kind, entry.id)]));
        const path = fillPath(route, params);
        const text = body === undefined ? undefined : JSON.stringify(body);
        cases.push(
          summarised({
            method: route.method,
            path,
            headers,
            ...(text === undefined ? {} : { body: text }),
            auth: 'valid',
            routed: true,
            summary: `${route.method} ${path} [auth valid] ${text === undefined ? 'no body' : `body ${describeText(text)}`} (near-valid, ${kind} ${entry.id})`,
          }),
        );
      }
    }
  }
  return cases;
}

/**
 * A request the route refuses after its guards: the strongest credentials it accepts (a user JWT
 * before the API key, which no per-user limit counts), existing ids, and `null` for a body.
 */
export function refusedCase(route: HttpRoute, fx: Fixtures, known: RouteKnowledge): HttpCase {
  const path = fillPath(route, Object.fromEntries(Object.entries(known.params).map(([name, id]) => [name, encodeURIComponent(id)])));
  const sendsBody = !BODYLESS.includes(route.method);
  return summarised({
    method: route.method,
    path,
    headers: { ...(validAuth(route, fx)[0] ?? {}), ...(sendsBody ? { 'content-type': 'application/json' } : {}) },
    ...(sendsBody ? { body: 'null' } : {}),
    auth: 'valid',
    routed: true,
    summary: `${route.method} ${path} [auth valid] ${sendsBody ? 'body null' : 'no body'}`,
  });
}

function badCases(route: HttpRoute, fx: Fixtures, known: RouteKnowledge): HttpCase[] {
  const goodPath = fillPath(route, Object.fromEntries(Object.entries(known.params).map(([name, id]) => [name, encodeURIComponent(id)])));
  const good = validAuth(route, fx)[0] ?? {};
  const make = (auth: AuthVariant, headers: Record<string, string>, summary: string, extra: Partial<HttpCase> = {}) =>
    summarised({
      method: route.method,
      path: goodPath,
      headers,
      auth,
      routed: true,
      summary: `${route.method} ${goodPath}: ${summary}`,
      ...extra,
    });
  const cases: HttpCase[] = [];
  if (!BODYLESS.includes(route.method)) {
    const json = { ...good, 'content-type': 'application/json' };
    const deep = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
    for (const [summary, body] of [
      ['body null', 'null'],
      ['body a number', '42'],
      ['body a string', '"text"'],
      ['body an array', '[]'],
      ['body true', 'true'],
      ['body an empty object', '{}'],
      ['body cut short', '{"a":'],
      ['body nested 100 000 deep', deep],
      ['body over 1 MiB', JSON.stringify({ content: 'x'.repeat(1024 * 1024) })],
    ] as const) {
      cases.push(make('valid', json, summary, { body }));
    }
    cases.push(make('valid', json, 'body of invalid UTF-8', { body: Uint8Array.from([0x7b, 0x22, 0xff, 0x22, 0x3a, 0xc3, 0x28, 0x7d]) }));
  }
  const malformed: Record<string, string> =
    route.auth === 'apiKey'
      ? { 'x-service-api-key': 'not-a-key' }
      : route.auth === 'operator'
        ? { 'x-service-operator-key': 'wrong' }
        : bearer('not-a-jwt');
  cases.push(make('missing', {}, 'no credentials'));
  cases.push(make('malformed', malformed, `credentials ${JSON.stringify(malformed)}`));
  if (route.auth !== 'apiKey' && route.auth !== 'operator') {
    // A JWT whose claims are too big for any key they are looked up by.
    const oversized = `${base64url({ alg: 'HS256', typ: 'JWT' })}.${base64url({ projectId: 'p'.repeat(3000), userId: 'u'.repeat(3000) })}.x`;
    cases.push(make('malformed', bearer(oversized), 'a JWT whose projectId and userId claims are 3000 characters long'));
  }
  for (const headers of expiredAuth(route, fx)) cases.push(make('expired', headers, `expired credentials ${Object.keys(headers)[0]}`));
  for (const headers of foreignAuth(route, fx)) cases.push(make('foreign', headers, `foreign credentials ${Object.keys(headers)[0]}`));
  for (const name of paramNames(route)) {
    for (const value of ['%2F', '%ED%A0%80', 'a'.repeat(4096), '%00']) {
      const path = fillPath(route, {
        ...Object.fromEntries(Object.entries(known.params).map(([n, id]) => [n, encodeURIComponent(id)])),
        [name]: value,
      });
      cases.push(
        make('valid', good, `${name} = ${value.length > 20 ? `${value.slice(0, 8)}… (${value.length})` : value}`, { path, routed: false }),
      );
    }
  }
  return cases;
}

/** Fails when the answer takes longer than `ms`: a hung handler is a finding too. */
export function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms: ${what}`)), ms);
  });
  // The late failure of work that lost the race is not an unhandled rejection.
  work.catch(() => undefined);
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/**
 * Sends a case: a streaming route through the SSE reader (closed at once when it opens), bytes with
 * `fetch` (the API client sends text only), everything else with the API client.
 */
export async function sendHttp(route: HttpRoute, fx: Fixtures, request: HttpCase): Promise<HttpAnswer> {
  if (route.transport === 'functionUrl' && request.method === 'GET') {
    const stream = await openSse(request.path, { baseUrl: fx.baseUrl, headers: { ...request.headers } });
    stream.close();
    return { status: stream.status, body: stream.body, headers: stream.headers };
  }
  if (request.body instanceof Uint8Array) {
    const body = new Blob([Buffer.from(request.body)]);
    return readAnswer(await fetch(`${fx.baseUrl}${request.path}`, { method: request.method, headers: request.headers, body }));
  }
  return clientOf(fx.baseUrl)(request.path, { method: request.method, headers: { ...request.headers }, rawBody: request.body });
}

const detailsOf = (answer: HttpAnswer): Detail[] =>
  answer.body?.error?.code === 'validation_failed' && Array.isArray(answer.body.error.details) ? answer.body.error.details : [];

/** Pool entries whose kind the parameter's name mentions come first (`roomId` → rooms). */
const candidatesFor = (name: string, pool: readonly PoolEntry[]) =>
  [...pool].sort((x, y) => Number(name.toLowerCase().includes(y.kind)) - Number(name.toLowerCase().includes(x.kind)));

/**
 * Learns what a route takes, with the strongest credentials it accepts: for each path parameter the
 * first existing id its validation lets through, then the body shape and the query fields from
 * `validation_failed` details (see `discovery.ts`). Each probe counts in `sent`.
 */
export async function discoverRoute(
  route: HttpRoute,
  fx: Fixtures,
  vocabulary: readonly string[],
  sent: (answer: HttpAnswer) => void,
): Promise<RouteKnowledge> {
  const headers = validAuth(route, fx)[0] ?? {};
  const probe = async (params: Record<string, string>, query: string, body?: unknown) => {
    const path = fillPath(route, Object.fromEntries(Object.entries(params).map(([name, value]) => [name, encodeURIComponent(value)])));
    const request: HttpCase = {
      method: route.method,
      path: `${path}${query}`,
      headers: body === undefined ? headers : { ...headers, 'content-type': 'application/json' },
      ...(body === undefined || BODYLESS.includes(route.method) ? {} : { body: JSON.stringify(body) }),
      auth: 'valid',
      routed: true,
      summary: 'discovery probe',
    };
    const answer = await within(15_000, `discovery of ${route.id}`, sendHttp(route, fx, request));
    sent(answer);
    return answer;
  };
  const params: Record<string, string> = {};
  for (const name of paramNames(route)) params[name] = candidatesFor(name, fx.pool)[0]?.id ?? 'x';
  for (const name of paramNames(route)) {
    for (const candidate of candidatesFor(name, fx.pool)) {
      params[name] = candidate.id;
      const refused = detailsOf(await probe(params, '', {})).some((detail) => detail.field === `path.${name}`);
      if (!refused) break;
    }
  }
  const query = detailsOf(await probe(params, `?${vocabulary.map((word) => `${word}=zz%00`).join('&')}`))
    .filter((detail) => detail.field.startsWith('query.'))
    .map((detail) => detail.field.slice('query.'.length).split('.')[0] as string);
  const body = BODYLESS.includes(route.method)
    ? emptyShape
    : await discoverShape(async (value) => detailsOf(await probe(params, '', value)), { prefix: 'body.', vocabulary });
  const seeds: Record<string, unknown>[] = [];
  if (!BODYLESS.includes(route.method)) {
    const repair = async (value: Record<string, unknown>): Promise<ProbeAnswer> => {
      const answer = await probe(params, '', value);
      return { accepted: answer.body?.error?.code !== 'validation_failed', details: detailsOf(answer) };
    };
    for (const fields of ['required', 'all'] as const) {
      const seed = await repairObject(body, repair, { prefix: 'body.', strings: fx.strings, fields });
      if (seed && !seeds.some((known) => JSON.stringify(known) === JSON.stringify(seed))) seeds.push(seed);
    }
  }
  return { params, body, seeds, query: [...new Set(query)] };
}
