import { describe, expect, it } from 'vitest';
import { httpRoutes } from '#wiring';
import { type ApiOptions, api, createTestProject, runtime, type TestProject, uniqueId } from '../api';
import { sendBytes } from '../attachments';
import { openSse } from '../sse';
import { expectMatrixFile, routesOf } from './areas.ts';

/**
 * The validation matrix (`test/e2e/validation/<area>.test.ts`): bad input of every field of every
 * request, wrong types, missing required fields, oversize values, unknown fields on strict bodies,
 * malformed JSON, bad path parameters. Each area's file gives a valid request per route (a positive
 * control, so a variant fails for its field and not for anything else) and its field variants;
 * `describeValidationMatrix` turns them into the checks every route gets.
 */

export type Body = Record<string, unknown>;
export type Auth = Pick<ApiOptions, 'token' | 'apiKey' | 'headers'>;
/** A field variant: [label, change to the valid body, field named in the error]. */
export type Variant = [string, (body: Body) => Body, string];

export interface RouteRequest {
  readonly path: () => string;
  readonly auth: () => Auth;
  /** A valid body (fresh on each call), for routes that take one. */
  readonly body?: () => Body;
  /** Status of the valid request. */
  readonly success: number;
  /** The whole body is optional (the route has a default for everything), so no body is no error. */
  readonly optionalBody?: boolean;
  /** The route names its room in the body rather than the path. */
  readonly roomInBody?: boolean;
  /** A valid body that is not JSON (a file upload): sent as these bytes with their type when no body is given. */
  readonly raw?: () => { readonly bytes: Buffer; readonly contentType: string };
}

/** How to make a request each route of an area accepts, by route id: every route of the area needs an entry. */
export type RouteRequests = Record<string, RouteRequest>;

/** The project a validation file sends its requests in: a project admin, a member, and a group room of the member's. */
export interface ValidationProject {
  readonly project: TestProject;
  readonly adminToken: string;
  readonly memberToken: string;
  readonly memberId: string;
  readonly roomId: string;
}

export async function createValidationProject(name: string): Promise<ValidationProject> {
  const project = await createTestProject(name);
  const memberId = uniqueId('member');
  const [adminToken, memberToken] = await Promise.all([project.token(uniqueId('admin'), ['admin']), project.token(memberId)]);
  const roomId = uniqueId('room');
  await api('/rooms', { token: memberToken, body: { id: roomId, type: 'group' } });
  return { project, adminToken, memberToken, memberId, roomId };
}

export const operator = (): Auth => ({ headers: { 'x-service-operator-key': runtime().operatorKey } });

const routeById = new Map(httpRoutes.map((route) => [route.id, route]));

/** A streaming route's answer: the refusal's JSON, or the status of a stream that opened (closed at once). */
async function openStream(path: string, auth: Auth) {
  const stream = await openSse(path, {
    token: auth.token,
    headers: { ...auth.headers, ...(auth.apiKey ? { 'x-service-api-key': auth.apiKey } : {}) },
  });
  stream.close();
  return { status: stream.status, body: stream.body, headers: stream.headers };
}

/** `send(id, changes)`: the valid request of route `id`, with the path, body or headers changed as given. */
export const sender =
  (requests: RouteRequests) =>
  (id: string, options: { path?: string; body?: unknown; rawBody?: string; headers?: Record<string, string> } = {}) => {
    const route = routeById.get(id);
    const request = requests[id];
    if (!route || !request) throw new Error(`no request for route ${id}`);
    const auth = { ...request.auth(), ...(options.headers ? { headers: { ...request.auth().headers, ...options.headers } } : {}) };
    if (route.transport === 'functionUrl') return openStream(options.path ?? request.path(), auth);
    const raw = options.body === undefined && options.rawBody === undefined ? request.raw?.() : undefined;
    if (raw) return sendBytes(options.path ?? request.path(), raw.bytes, { ...auth, contentType: raw.contentType, method: route.method });
    return api(options.path ?? request.path(), { method: route.method, ...auth, body: options.body, rawBody: options.rawBody });
  };

export const expectInvalid = (response: { status: number; body: any }, field: string) => {
  expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
  expect(response.body.error.details, JSON.stringify(response.body.error.details)).toContainEqual(expect.objectContaining({ field }));
};

export const set = (key: string, value: unknown) => (body: Body) => ({ ...body, [key]: value });
export const drop = (key: string) => (body: Body) => Object.fromEntries(Object.entries(body).filter(([name]) => name !== key));
export const long = (length: number) => 'a'.repeat(length);
export const future = () => new Date(Date.now() + 24 * 3600_000).toISOString();

/** Id-field variants: [label, change, field] for `key` missing (when required), of a wrong type, empty, oversize or with a forbidden character. */
export const idVariants = (key: string, required: boolean): Variant[] => [
  ...(required ? [[`${key} missing`, drop(key), `body.${key}`] as Variant] : []),
  [`${key} a number`, set(key, 42), `body.${key}`],
  [`${key} null`, set(key, null), `body.${key}`],
  [`${key} empty`, set(key, ''), `body.${key}`],
  [`${key} of 129 characters`, set(key, long(129)), `body.${key}`],
  [`${key} with a space`, set(key, 'a b'), `body.${key}`],
  [`${key} with #`, set(key, 'a#b'), `body.${key}`],
];

/** Text-field variants: [label, change, field] for `key` holding a wrong type, `null` (when not allowed), an empty or oversize value. */
export const textVariants = (key: string, options: { required?: boolean; nullable?: boolean; max?: number } = {}): Variant[] => [
  ...(options.required ? [[`${key} missing`, drop(key), `body.${key}`] as Variant] : []),
  [`${key} a number`, set(key, 42), `body.${key}`],
  [`${key} an object`, set(key, { value: 'x' }), `body.${key}`],
  ...(options.nullable ? [] : [[`${key} null`, set(key, null), `body.${key}`] as Variant]),
  [`${key} empty`, set(key, ''), `body.${key}`],
  ...(options.max === undefined
    ? []
    : [[`${key} of ${options.max + 1} characters`, set(key, long(options.max + 1)), `body.${key}`] as Variant]),
];

/**
 * Invalid values per path parameter. Most are ids (no `#`, no space, at most 128 characters);
 * webhook ids are only bounded in length (1..200), Matrix transaction ids too (1..255); delivery ids must be `whd_` and 32 lowercase hex;
 * device ids `pd_` and 22 letters or digits; a web push subscription is named by its id or its
 * (percent-encoded) endpoint, so only its length (1..2048) is checked; message ids are 1-16 digits;
 * project ids 2-63 of lowercase letters, digits and `-`, not starting with `-`.
 */
const badPathValues = (param: string): string[] => {
  const idValues = ['bad%23id', encodeURIComponent('a b'), long(129)];
  if (param === 'webhookId') return [long(201)];
  // A homeserver names its transactions as it likes: any text up to 255 characters is one.
  if (param === 'txnId') return [long(256)];
  if (param === 'idOrEndpoint') return [long(2049), encodeURIComponent(`https://push.example.com/${long(2024)}`)];
  if (param === 'deviceId')
    return [...idValues, `pd_${'A'.repeat(21)}`, `pd_${'A'.repeat(23)}`, `pd_${'A'.repeat(10)}-${'A'.repeat(11)}`, `ws_${'A'.repeat(22)}`];
  if (param === 'deliveryId')
    return [...idValues, `whd_${'A'.repeat(32)}`, `whd_${'0'.repeat(31)}`, `whd_${'0'.repeat(33)}`, `wh_${'0'.repeat(32)}`];
  if (param === 'notificationId') return [...idValues, 'abc', `${'0'.repeat(15)}-${'g'.repeat(16)}`, `${'0'.repeat(14)}-${'0'.repeat(16)}`];
  if (param === 'messageId') return [...idValues, 'abc', '-1', '1.5', '1'.repeat(17)];
  if (param === 'projectId') return [...idValues, 'Upper-Case', '-dash', 'a', 'under_score'];
  return idValues;
};

const described = (routes: readonly { id: string; method: string; path: string }[]) =>
  routes.map((route) => ({ id: route.id, method: route.method, path: route.path }));

/**
 * The checks every route of `areaId` gets from its valid request: the control itself, malformed,
 * non-object, oversize and unknown-field bodies, a missing body, each field variant, bad path
 * parameters and an unknown room. The area's own checks (query parameters, rules beyond the body
 * schemas) stay in its file.
 */
export function describeValidationMatrix(areaId: string, requests: RouteRequests, fieldVariants: Record<string, Variant[]>): void {
  const send = sender(requests);
  const routes = routesOf(areaId);

  describe('every route', () => {
    it('has a request in this file', () => {
      // Assess
      expect(Object.keys(requests).sort()).toEqual(routes.map((route) => route.id).sort());
      expectMatrixFile(areaId);
    });

    describe.each(described(routes))('$method $path ($id)', ({ id }) => {
      it('accepts the valid request (control for the variants below)', async () => {
        // Act
        const response = await send(id, { body: requests[id]?.body?.() });

        // Assess
        expect({ status: response.status, error: response.body?.error }).toEqual({ status: requests[id]?.success, error: undefined });
      });
    });
  });

  const bodyRoutes = routes.filter((route) => requests[route.id]?.body);

  if (bodyRoutes.length > 0) {
    describe.each(described(bodyRoutes))('$method $path ($id) body', ({ id }) => {
      it('answers 400 invalid_json to malformed JSON', async () => {
        // Act
        const response = await send(id, { rawBody: '{"content": "unterminated' });

        // Assess
        expect(response).toMatchObject({ status: 400, body: { error: { code: 'invalid_json' } } });
      });

      it.each(['null', '[]', '"text"', '42'])('answers 400 validation_failed to the JSON value %s', async (rawBody) => {
        // Act
        const response = await send(id, { rawBody });

        // Assess
        expectInvalid(response, 'body');
      });

      it('answers 413 payload_too_large to a body over 1 MiB', async () => {
        // Act
        const response = await send(id, { rawBody: JSON.stringify({ content: 'x'.repeat(1024 * 1024) }) });

        // Assess
        expect(response).toMatchObject({ status: 413, body: { error: { code: 'payload_too_large' } } });
      });

      it('answers 400 naming the unknown field on the strict body', async () => {
        // Act
        const response = await send(id, { body: { ...requests[id]?.body?.(), bogusField: 1 } });

        // Assess
        expectInvalid(response, 'body');
        expect(response.body.error.details.map((d: any) => d.message).join(' ')).toContain('bogusField');
      });
    });
  }

  const requiredBodyRoutes = bodyRoutes.filter((route) => !requests[route.id]?.optionalBody);

  if (requiredBodyRoutes.length > 0) {
    describe('a request without a body', () => {
      it.each(requiredBodyRoutes.map((route) => route.id))('%s answers 400 validation_failed', async (id) => {
        // Act
        const response = await send(id);

        // Assess
        expectInvalid(response, 'body');
      });
    });
  }

  const variantCases = Object.entries(fieldVariants).map(([id, variants]) => ({ id, variants }));

  if (variantCases.length > 0) {
    describe.each(variantCases)('$id body fields', ({ id, variants }) => {
      it.each(variants.map(([label, change, field]) => ({ label, change, field })))(
        '$label → 400 naming $field',
        async ({ change, field }) => {
          // Prepare
          const body = change(requests[id]?.body?.() ?? {});

          // Act
          const response = await send(id, { body });

          // Assess
          expectInvalid(response, field);
        },
      );
    });
  }

  const paramRoutes = routes.filter((route) => route.path.includes('{'));

  if (paramRoutes.length > 0) {
    describe('path parameters', () => {
      describe.each(described(paramRoutes))('$method $path', ({ id, path }) => {
        const params = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1] as string);

        it.each(params.flatMap((param) => badPathValues(param).map((value) => ({ param, value }))))(
          '$param = $value → 400 naming path.$param',
          async ({ param, value }) => {
            // Prepare
            const valid = requests[id]?.path() ?? '';
            const segments = path.split('/');
            const concrete = valid
              .split('/')
              .map((segment, index) => (segments[index] === `{${param}}` ? value : segment))
              .join('/');

            // Act
            const response = await send(id, { path: concrete, body: requests[id]?.body?.() });

            // Assess
            expectInvalid(response, `path.${param}`);
          },
        );
      });
    });
  }

  const roomRoutes = routes.filter((route) => route.path.includes('{roomId}') || requests[route.id]?.roomInBody);

  if (roomRoutes.length > 0) {
    describe('an unknown room', () => {
      it.each(described(roomRoutes))('$method $path ($id) → 404 room_not_found', async ({ id, path: template }) => {
        // Prepare
        const missing = uniqueId('missing');
        const valid = requests[id]?.body?.();
        const body =
          valid && 'messages' in valid
            ? { messages: (valid.messages as Body[]).map((row) => ({ ...row, roomId: missing })) }
            : valid && 'roomId' in valid
              ? { ...valid, roomId: missing }
              : valid;
        // The room's segment of the path, whichever room the request names (some draw a fresh one from a pool).
        const segments = template.split('/');
        const path = (requests[id]?.path() ?? '')
          .split('/')
          .map((segment, index) => (segments[index] === '{roomId}' ? missing : segment))
          .join('/');

        // Act
        const response = await send(id, { path, body });

        // Assess
        expect(response).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
      });
    });
  }
}
