import { createContext, runInContext } from 'node:vm';
import type { Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { handler as connectHandler } from '../../functions/ws/connect';
import { consoleIndexCode, STAGE_PLACEHOLDER, viewerAddressCode, websocketViewerRequestCode } from '../../lib/edge-functions';
import { requestUrl } from '../../lib/local/gateway/state';
import { connectQuery } from '../../lib/local/gateway/websocket-target';

/**
 * Local parity of the `/ws/*` CloudFront Function (issue 27, item 4). Each request target of the
 * table goes two ways and must come out the same:
 * - locally: the gateway's own reading (`requestUrl`, then `connectQuery`), as `handleUpgrade` does;
 * - on AWS: the target as CloudFront hands it to a viewer-request function (cloudfront-js-2.0's
 *   event: the URI and the query names and values as the viewer encoded them, duplicates under
 *   `multiValue`, header names lower case), the function's own JavaScript run in a fresh V8 context
 *   without `require`, `process` or `Buffer`, then what it returns: a refusal (status and body), or
 *   the request CloudFront forwards to the WebSocket API stage, whose query string reaches
 *   `$connect` decoded as the local gateway decodes its `/ws?roomId=` form.
 * So the same channel, id and query parameters reach `$connect`, or the same status and error code
 * refuse the upgrade. Where `$connect` itself refuses (no token, an id its schema refuses), the
 * real handler is run on that query to show the status both sides then answer.
 */

const STAGE = 'prod';
const VIEWER_IP = '203.0.113.7';
const gateway = { baseUrl: 'http://127.0.0.1:8080', domainName: '127.0.0.1:8080', ready: true, stopping: false };
/** CloudFront's own limit on a function's code (quotas: "Maximum size of a function", 10 KB). */
const FUNCTION_SIZE_LIMIT = 10 * 1024;

type Header = { value: string; multiValue?: { value: string }[] };
type Headers = Record<string, Header>;
type ViewerRequest = { method: string; uri: string; querystring: Record<string, Header> | string; headers: Headers; cookies: object };
type ViewerResponse = { statusCode: number; statusDescription?: string; headers?: Headers; body?: string | { data: string } };
type Outcome = { query: Record<string, string> } | { status: number; code: string };

/** How CloudFront runs a function: its code evaluated once (strict mode), `handler(event)` called. */
function cloudFrontFunction(code: string, context = createContext({})): (event: object) => ViewerRequest | ViewerResponse {
  runInContext(`'use strict';\n${code}`, context, { filename: 'cloudfront-function.js' });
  const call = runInContext('(json) => JSON.stringify(handler(JSON.parse(json)))', context) as (json: string) => string;
  // The event is built inside the context and the answer leaves it as JSON: nothing crosses realms.
  return (event) => JSON.parse(call(JSON.stringify(event)));
}

const websocketFunction = cloudFrontFunction(websocketViewerRequestCode(STAGE));
const viewerAddressFunction = cloudFrontFunction(viewerAddressCode());

function fieldsOf(pairs: [string, string][]): Record<string, Header> {
  const fields: Record<string, Header> = {};
  for (const [name, value] of pairs) {
    const field = Object.hasOwn(fields, name) ? fields[name] : undefined;
    if (!field) fields[name] = { value };
    else field.multiValue = [...(field.multiValue ?? [{ value: field.value }]), { value }];
  }
  return fields;
}

const VIEWER_HEADERS: [string, string][] = [
  ['host', 'chat.example.com'],
  ['sec-websocket-version', '13'],
];

/** The viewer request event for a request target, as CloudFront builds it (nothing decoded). */
function viewerRequestEvent(target: string, headers: [string, string][] = []) {
  const queryAt = target.indexOf('?');
  const uri = queryAt < 0 ? target : target.slice(0, queryAt);
  const rawQuery = queryAt < 0 ? '' : target.slice(queryAt + 1);
  const pairs = rawQuery
    .split('&')
    .filter((pair) => pair !== '')
    .map((pair): [string, string] => {
      const equals = pair.indexOf('=');
      return equals < 0 ? [pair, ''] : [pair.slice(0, equals), pair.slice(equals + 1)];
    });
  return {
    version: '1.0',
    context: { distributionDomainName: 'd111111abcdef8.cloudfront.net', distributionId: 'EDFDVBD6EXAMPLE', eventType: 'viewer-request' },
    viewer: { ip: VIEWER_IP },
    request: {
      method: 'GET',
      uri,
      querystring: fieldsOf(pairs),
      headers: fieldsOf([...VIEWER_HEADERS, ...headers].map(([name, value]) => [name.toLowerCase(), value])),
      cookies: {},
    },
  };
}

/** The query string CloudFront forwards: a `multiValue` array stands for all the values of its name. */
function forwardedQuery(querystring: ViewerRequest['querystring']): string {
  if (typeof querystring === 'string') return querystring;
  return Object.entries(querystring)
    .flatMap(([name, field]) => (field.multiValue ?? [field]).map(({ value }) => `${name}=${value}`))
    .join('&');
}

const isResponse = (answer: ViewerRequest | ViewerResponse): answer is ViewerResponse => 'statusCode' in answer;

function localOutcome(target: string): Outcome {
  const read = connectQuery(requestUrl(gateway, target));
  return 'error' in read ? { status: read.status, code: read.error.code } : { query: read.query };
}

function edgeOutcome(target: string): Outcome {
  const answer = websocketFunction(viewerRequestEvent(target));
  if (isResponse(answer)) {
    const body = JSON.parse(typeof answer.body === 'string' ? answer.body : (answer.body?.data ?? ''));
    expect(answer.headers?.['content-type']?.value).toBe('application/json');
    return { status: answer.statusCode, code: body.error.code };
  }
  expect(answer.uri).toBe(`/${STAGE}`);
  const query = forwardedQuery(answer.querystring);
  // CloudFront's rule for a query string a function writes: no spaces, control characters or `#`.
  expect(query).toMatch(/^[!-"$-~]*$/);
  const read = connectQuery(requestUrl(gateway, `/ws${query ? `?${query}` : ''}`));
  if ('error' in read) throw new Error(`The stage form was refused: ${read.error.message}`);
  return { query: read.query };
}

/** The body of a local refusal, which the edge must answer word for word. */
function localRefusalBody(target: string) {
  const read = connectQuery(requestUrl(gateway, target));
  return 'error' in read ? { error: read.error } : undefined;
}

async function connectAnswer(query: Record<string, string>) {
  const event = {
    requestContext: {
      routeKey: '$connect',
      eventType: 'CONNECT',
      connectionId: 'L0SM9cOFvHcCIhw=',
      requestId: 'edge-parity',
      stage: STAGE,
    },
    headers: {},
    queryStringParameters: query,
    isBase64Encoded: false,
  };
  const result = await connectHandler(event as never, { awsRequestId: 'edge-parity' } as Context);
  const answer = result as { statusCode: number; body: string };
  return { status: answer.statusCode, code: JSON.parse(answer.body).error.code as string };
}

const LONG_ID = 'r'.repeat(3000);

/** `connect` names what `$connect` answers to that query (run for real below); a refusal there is the same on both sides. */
const table: { name: string; target: string; expected: Outcome; connect?: { status: number; code: string } }[] = [
  {
    name: 'a room with token, cache and history',
    target: '/ws/rooms/room_1?token=h.p.s&cache=1&history=5',
    expected: { query: { token: 'h.p.s', cache: '1', history: '5', roomId: 'room_1' } },
  },
  { name: 'the user channel', target: '/ws/user/user_1?token=h.p.s', expected: { query: { token: 'h.p.s', userId: 'user_1' } } },
  { name: "the stage's own form", target: '/ws?roomId=room_1&token=h.p.s', expected: { query: { roomId: 'room_1', token: 'h.p.s' } } },
  {
    name: "the stage's form for a user",
    target: '/ws?userId=user_1&token=h.p.s',
    expected: { query: { userId: 'user_1', token: 'h.p.s' } },
  },
  {
    name: 'no token: the query reaches $connect, which refuses it',
    target: '/ws/rooms/room_1',
    expected: { query: { roomId: 'room_1' } },
    connect: { status: 401, code: 'missing_credentials' },
  },
  {
    name: "a Pusher app's endpoint, with pusher-js's query",
    target: '/app/key_1?protocol=7&client=js&version=8.6.0&flash=false',
    expected: { query: { protocol: '7', client: 'js', version: '8.6.0', flash: 'false', pusherKey: 'key_1' } },
  },
  {
    name: "the client's pusherKey and roomId never win over the app path",
    target: '/app/key_1?pusherKey=key_evil&roomId=room_9&protocol=7',
    expected: { query: { protocol: '7', pusherKey: 'key_1' } },
  },
  {
    name: 'a pusherKey on a room path goes',
    target: '/ws/rooms/room_1?pusher%4Bey=key_1&token=t',
    expected: { query: { roomId: 'room_1', token: 't' } },
  },
  { name: 'an empty app key', target: '/app/?protocol=7', expected: { status: 404, code: 'not_found' } },
  { name: 'an extra segment after the app key', target: '/app/key_1/x', expected: { status: 404, code: 'not_found' } },
  { name: "Pusher's HTTP API path is no socket", target: '/apps/1/events', expected: { status: 404, code: 'not_found' } },
  { name: 'an empty room id', target: '/ws/rooms/?token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'an empty room id and a slash', target: '/ws/rooms//?token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'an empty user id', target: '/ws/user/?token=t', expected: { status: 404, code: 'not_found' } },
  {
    name: 'an encoded slash stays in the id, which $connect refuses',
    target: '/ws/rooms/a%2Fb?token=t',
    expected: { query: { token: 't', roomId: 'a/b' } },
    connect: { status: 400, code: 'validation_failed' },
  },
  {
    name: 'an encoded slash spelled in lower case',
    target: '/ws/rooms/a%2fb?token=t',
    expected: { query: { token: 't', roomId: 'a/b' } },
    connect: { status: 400, code: 'validation_failed' },
  },
  { name: 'a truncated escape', target: '/ws/rooms/%E0%A4%A?token=t', expected: { status: 400, code: 'invalid_path' } },
  { name: 'an escape of no hex', target: '/ws/rooms/%zz?token=t', expected: { status: 400, code: 'invalid_path' } },
  { name: 'a lone percent sign', target: '/ws/rooms/%?token=t', expected: { status: 400, code: 'invalid_path' } },
  { name: 'an escaped UTF-16 surrogate', target: '/ws/user/%ED%A0%80?token=t', expected: { status: 400, code: 'invalid_path' } },
  { name: 'a trailing slash', target: '/ws/rooms/room_1/?token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'an extra segment', target: '/ws/rooms/room_1/extra?token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'a trailing slash after /ws', target: '/ws/?roomId=room_1&token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'an unknown channel', target: '/ws/room/room_1?token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'a channel in capitals', target: '/ws/ROOMS/room_1?token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'a longer first segment', target: '/wsx/rooms/room_1?token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'a doubled leading slash', target: '//ws/rooms/room_1?token=t', expected: { status: 404, code: 'not_found' } },
  { name: '.. as the room id', target: '/ws/rooms/..?token=t', expected: { status: 404, code: 'not_found' } },
  { name: '.. after the room id', target: '/ws/rooms/room_1/..?token=t', expected: { status: 404, code: 'not_found' } },
  { name: '.. spelled as escapes', target: '/ws/rooms/%2e%2E?token=t', expected: { status: 404, code: 'not_found' } },
  {
    name: '.. walking from a room into a user channel opens the channel the URL resolves to',
    target: '/ws/rooms/room_1/../../user/user_1?token=t',
    expected: { query: { token: 't', userId: 'user_1' } },
  },
  {
    name: '.%2e walking back into /ws',
    target: '/ws/rooms/.%2e/../ws/rooms/room_2?token=t',
    expected: { query: { token: 't', roomId: 'room_2' } },
  },
  { name: '. segments', target: '/ws/./rooms/./room_1?token=t', expected: { query: { token: 't', roomId: 'room_1' } } },
  { name: 'backslashes read as slashes', target: '/ws\\rooms\\room_1?token=t', expected: { query: { token: 't', roomId: 'room_1' } } },
  {
    name: '..%2F.. is one segment, an id $connect refuses',
    target: '/ws/rooms/..%2F..?token=t',
    expected: { query: { token: 't', roomId: '../..' } },
    connect: { status: 400, code: 'validation_failed' },
  },
  {
    name: "the client's roomId never wins over the path",
    target: '/ws/rooms/room_1?roomId=room_evil&token=t',
    expected: { query: { roomId: 'room_1', token: 't' } },
  },
  {
    name: "the client's roomId after the token",
    target: '/ws/rooms/room_1?token=t&roomId=room_evil',
    expected: { query: { token: 't', roomId: 'room_1' } },
  },
  {
    name: "the client's roomId spelled with an escape",
    target: '/ws/rooms/room_1?room%49d=room_evil&token=t',
    expected: { query: { roomId: 'room_1', token: 't' } },
  },
  {
    name: "the client's roomId given twice",
    target: '/ws/rooms/room_1?roomId=room_evil&token=t&roomId=room_worse',
    expected: { query: { roomId: 'room_1', token: 't' } },
  },
  {
    name: "the client's userId on the user channel",
    target: '/ws/user/user_1?userId=user_evil&token=t',
    expected: { query: { userId: 'user_1', token: 't' } },
  },
  {
    name: "the client's roomId on the user channel goes: a user path opens the user channel only",
    target: '/ws/user/user_1?roomId=room_9&token=t',
    expected: { query: { userId: 'user_1', token: 't' } },
  },
  {
    name: "the client's userId on a room channel goes (%75serId spelled too)",
    target: '/ws/rooms/room_1?%75serId=user_1&token=t',
    expected: { query: { roomId: 'room_1', token: 't' } },
  },
  {
    name: 'a token given twice reaches $connect as one comma-joined value',
    target: '/ws/rooms/room_1?token=a&cache=1&token=b',
    expected: { query: { token: 'a,b', cache: '1', roomId: 'room_1' } },
  },
  {
    name: 'escapes and + in the query are decoded once',
    target: '/ws/rooms/room_1?token=a%26roomId%3Droom_evil&note=x+y%20z',
    expected: { query: { token: 'a&roomId=room_evil', note: 'x y z', roomId: 'room_1' } },
  },
  {
    name: 'empty pairs and a name without a value',
    target: '/ws/rooms/room_1?&&token=t&cache&=x&',
    expected: { query: { token: 't', cache: '', '': 'x', roomId: 'room_1' } },
  },
  {
    name: 'an empty query',
    target: '/ws/rooms/room_1?',
    expected: { query: { roomId: 'room_1' } },
    connect: { status: 401, code: 'missing_credentials' },
  },
  {
    name: 'a + in the id is a plus, not a space',
    target: '/ws/rooms/a+b?token=t',
    expected: { query: { token: 't', roomId: 'a+b' } },
    connect: { status: 400, code: 'validation_failed' },
  },
  {
    name: 'an escaped space and quote in the id',
    target: '/ws/rooms/a%20b%22?token=t',
    expected: { query: { token: 't', roomId: 'a b"' } },
    connect: { status: 400, code: 'validation_failed' },
  },
  {
    name: 'a raw quote in the id',
    target: '/ws/rooms/a"b?token=t',
    expected: { query: { token: 't', roomId: 'a"b' } },
    connect: { status: 400, code: 'validation_failed' },
  },
  {
    name: 'the characters ids may hold',
    target: '/ws/rooms/r.1:a@b-c_d?token=t',
    expected: { query: { token: 't', roomId: 'r.1:a@b-c_d' } },
  },
  {
    name: 'a unicode id, escaped',
    target: '/ws/rooms/%E6%88%BF%E9%97%B4%F0%9F%98%80?token=t',
    expected: { query: { token: 't', roomId: '房间😀' } },
    connect: { status: 400, code: 'validation_failed' },
  },
  {
    name: 'a unicode id, raw',
    target: '/ws/user/caf\u00e9?token=t',
    expected: { query: { token: 't', userId: 'café' } },
    connect: { status: 400, code: 'validation_failed' },
  },
  { name: 'a quote in a path no route serves', target: '/ws/a"b/c?token=t', expected: { status: 404, code: 'not_found' } },
  { name: 'a unicode path no route serves', target: '/ws/caf\u00e9/\u{1f600}?token=t', expected: { status: 404, code: 'not_found' } },
  {
    name: 'a very long id',
    target: `/ws/rooms/${LONG_ID}?token=t`,
    expected: { query: { token: 't', roomId: LONG_ID } },
    connect: { status: 400, code: 'validation_failed' },
  },
  {
    name: 'an id of 128 characters, the longest allowed',
    target: `/ws/rooms/${'r'.repeat(128)}?token=t`,
    expected: { query: { token: 't', roomId: 'r'.repeat(128) } },
  },
];

describe('the /ws/* CloudFront Function against the local gateway', () => {
  it.each(table)('$name', async ({ target, expected, connect }) => {
    // Act
    const local = localOutcome(target);
    const edge = edgeOutcome(target);

    // Assert
    expect(local).toEqual(expected);
    expect(edge).toEqual(local);
    if ('status' in expected) {
      const answer = websocketFunction(viewerRequestEvent(target)) as ViewerResponse;
      expect(JSON.parse(answer.body as string)).toEqual(localRefusalBody(target));
    }
    if (connect) await expect(connectAnswer((expected as { query: Record<string, string> }).query)).resolves.toEqual(connect);
  });

  it('sets x-chat-viewer-address from the viewer, replacing what the client sent', () => {
    // Arrange
    const event = viewerRequestEvent('/ws/rooms/room_1?token=t', [
      ['X-Chat-Viewer-Address', '198.51.100.1'],
      ['x-chat-viewer-address', '198.51.100.2'],
    ]);

    // Act
    const answer = websocketFunction(event) as ViewerRequest;

    // Assert
    expect(answer.headers['x-chat-viewer-address']).toEqual({ value: VIEWER_IP });
    expect(answer.headers.host).toEqual({ value: 'chat.example.com' });
  });

  it('runs in a context without what a CloudFront Function lacks', () => {
    // Arrange
    const context = createContext({});
    cloudFrontFunction(websocketViewerRequestCode(STAGE), context);

    // Act
    const globals = runInContext('[typeof require, typeof process, typeof Buffer, typeof setTimeout, typeof handler]', context);

    // Assert
    expect(globals).toEqual(['undefined', 'undefined', 'undefined', 'undefined', 'function']);
  });
});

describe('the default behaviour CloudFront Function', () => {
  it('only sets x-chat-viewer-address from the viewer, replacing what the client sent', () => {
    // Arrange
    const event = viewerRequestEvent('/rooms/room_1/messages?limit=5', [
      ['x-chat-viewer-address', '198.51.100.1'],
      ['authorization', 'Bearer h.p.s'],
    ]);

    // Act
    const answer = viewerAddressFunction(event) as ViewerRequest;

    // Assert
    const { headers: sentHeaders, ...sentRest } = event.request;
    const { headers, ...rest } = answer;
    expect(rest).toEqual(sentRest);
    expect(headers).toEqual({ ...sentHeaders, 'x-chat-viewer-address': { value: VIEWER_IP } });
  });
});

describe('the console behaviours CloudFront Function', () => {
  const consoleFunction = cloudFrontFunction(consoleIndexCode());

  // As the local gateway serves the console (lib/local/gateway/web-pages.ts): `/console` and
  // `/console/index.html` move to `/console/`, which is the page; its script and any other key pass.
  it.each([
    ['/console', { status: 301, location: '/console/' }],
    ['/console/index.html', { status: 301, location: '/console/' }],
    ['/console/', { uri: '/console/index.html' }],
    ['/console/console.js', { uri: '/console/console.js' }],
    ['/console/missing.css', { uri: '/console/missing.css' }],
  ])('maps %s', (uri, expected) => {
    // Act
    const answer = consoleFunction(viewerRequestEvent(uri));

    // Assert
    if ('status' in expected) {
      expect(isResponse(answer) && [answer.statusCode, answer.headers?.location?.value]).toEqual([expected.status, expected.location]);
    } else {
      expect(!isResponse(answer) && answer.uri).toBe(expected.uri);
    }
  });
});

describe('the functions as the CDK code gets them', () => {
  it('puts the stage name in place of the placeholder', () => {
    // Act
    const code = websocketViewerRequestCode('prod_2');

    // Assert
    expect(code).not.toContain(STAGE_PLACEHOLDER);
    expect(code).toContain("'/prod_2'");
  });

  it.each(['', '$default', 'a/b', "prod';x='", 'prod stage', 's'.repeat(129)])('refuses the stage name %j', (stageName) => {
    // Act / Assert
    expect(() => websocketViewerRequestCode(stageName)).toThrow(/stage name/);
  });

  it('keeps each function under half of CloudFront Functions’ 10 KB', () => {
    // Act
    const sizes = [websocketViewerRequestCode('s'.repeat(128)), viewerAddressCode(), consoleIndexCode()].map((code) =>
      Buffer.byteLength(code, 'utf8'),
    );

    // Assert
    for (const size of sizes) expect(size).toBeLessThan(FUNCTION_SIZE_LIMIT / 2);
  });
});
