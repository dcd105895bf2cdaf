import middy from '@middy/core';
import httpHeaderNormalizer from '@middy/http-header-normalizer';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { authentication } from '#edge/middlewares/authentication';
import { errorResponse } from '#edge/middlewares/error-response';
import { MAX_BODY_BYTES } from '#edge/middlewares/json-body';
import { validation } from '#edge/middlewares/validation';
import * as z from '#shared/schema';
import { type HttpRoute, httpRoute } from '#wiring';

/** Validation names each bad field, in a fixed order of parts; authentication speaks per route kind. */

type Answer = { statusCode: number; body: string };

/** Invokes a test pipeline as Lambda would, with a plain context. */
function run(pipeline: unknown, event: Partial<APIGatewayProxyEventV2>) {
  const invoke = pipeline as (event: APIGatewayProxyEventV2, context: Context) => Promise<Answer>;
  return invoke({ headers: {}, requestContext: { requestId: 'r' }, ...event } as APIGatewayProxyEventV2, {} as Context);
}
const errorOf = (answer: Answer) => ({ status: answer.statusCode, ...JSON.parse(answer.body).error });

describe('validation', () => {
  const schemas = {
    params: z.object({ roomId: z.string().check(z.regex(/^[a-z]+$/)) }),
    body: z.strictObject({ content: z.string(), tags: z.optional(z.array(z.string())) }),
  };
  const pipeline = middy()
    .use(errorResponse())
    .use(validation(schemas))
    .handler(async (_event: unknown, context: Context & { input?: unknown }) => ({ statusCode: 200, body: JSON.stringify(context.input) }));

  it('hands the parsed parts on, and names every bad field of the body', async () => {
    // Act
    const accepted = await run(pipeline, { pathParameters: { roomId: 'lobby' }, body: '{"content":"hi"}' });
    const refused = await run(pipeline, { pathParameters: { roomId: 'lobby' }, body: '{"content":1,"tags":[2],"extra":true}' });

    // Assess
    expect(JSON.parse(accepted.body)).toEqual({ params: { roomId: 'lobby' }, query: undefined, body: { content: 'hi' } });
    expect(errorOf(refused)).toMatchObject({
      status: 400,
      code: 'validation_failed',
      details: [
        { field: 'body.content', message: expect.any(String) },
        { field: 'body.tags.0', message: expect.any(String) },
        { field: 'body', message: expect.stringContaining('extra') },
      ],
    });
  });

  it('checks the path before it reads the body, and reads a body a route has no schema for', async () => {
    // Prepare
    const noBodySchema = middy()
      .use(errorResponse())
      .use(validation({}))
      .handler(async () => ({ statusCode: 204 }));

    // Act
    const badPathAndJson = await run(pipeline, { pathParameters: { roomId: 'Lobby!' }, body: '{not json' });
    const badJson = await run(noBodySchema, { body: '{not json' });
    const oversize = await run(noBodySchema, { body: `"${'x'.repeat(MAX_BODY_BYTES)}"` });

    // Assess
    expect(errorOf(badPathAndJson)).toMatchObject({ status: 400, code: 'validation_failed', details: [{ field: 'path.roomId' }] });
    expect(errorOf(badJson)).toMatchObject({ status: 400, code: 'invalid_json' });
    expect(errorOf(oversize)).toMatchObject({ status: 413, code: 'payload_too_large' });
  });
});

describe('authentication', () => {
  const route = (auth: HttpRoute['auth']): HttpRoute => ({ ...httpRoute('GetHealth'), id: `T-${auth}`, auth });
  const pipeline = (r: HttpRoute, options = {}) =>
    middy()
      .use(httpHeaderNormalizer())
      .use(errorResponse())
      .use(authentication(r, options))
      .handler(async () => ({ statusCode: 204 }));

  it.each([
    { auth: 'user' as const, options: {}, message: 'Authorization: Bearer <JWT> is required' },
    { auth: 'user' as const, options: { tokenInQuery: true }, message: 'Authorization: Bearer <JWT> or ?token= is required' },
    { auth: 'userOrService' as const, options: {}, message: 'Authorization: Bearer <JWT> or X-Service-Api-Key is required' },
    { auth: 'apiKey' as const, options: {}, message: 'The X-Service-Api-Key header is required' },
  ])('answers a call without credentials to an $auth route 401 "$message"', async ({ auth, options, message }) => {
    // Act
    const answer = await run(pipeline(route(auth), options), {});

    // Assess
    expect(errorOf(answer)).toEqual({ status: 401, code: 'missing_credentials', message });
  });

  it('hides operator routes without an operator key, refuses a wrong key, and lets the right one through (any header case)', async () => {
    // Prepare
    const noKey = pipeline(route('operator'), { operatorKey: async () => undefined });
    const keyed = pipeline(route('operator'), { operatorKey: async () => 'the-operator-key' });

    // Act
    const hidden = await run(noKey, { headers: { 'X-Service-Operator-Key': 'the-operator-key' } });
    const wrong = await run(keyed, { headers: { 'X-Service-Operator-Key': 'guess' } });
    const right = await run(keyed, { headers: { 'X-Service-Operator-Key': 'the-operator-key' } });

    // Assess
    expect(errorOf(hidden)).toMatchObject({ status: 404, code: 'not_found' });
    expect(errorOf(wrong)).toMatchObject({ status: 401, code: 'missing_credentials' });
    expect(right.statusCode).toBe(204);
    expect(() => authentication(route('operator'))).toThrow(/needs operatorAuth/);
  });
});
