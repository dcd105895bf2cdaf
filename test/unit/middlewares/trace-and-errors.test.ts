import middy from '@middy/core';
import { describe, expect, it } from 'vitest';
import { errorResponse } from '#edge/middlewares/error-response';
import { type TraceIdContext, traceId } from '#edge/middlewares/trace-id';
import { HttpError, RateLimitedError } from '#shared/errors';

/**
 * The trace id and the error answer, as every HTTP, SSE and WebSocket pipeline stacks them: the id
 * the client may quote, echoed on every answer, and a 5xx that says nothing of our insides.
 */

const internalDetail = 'ProvisionedThroughputExceeded on table chat-prod-Table-1ABC at 10.0.3.7';

interface Event {
  headers?: Record<string, string>;
  requestContext?: { requestId?: string };
}

function pipeline(run: () => Promise<unknown>, options = { trustClient: true, echo: true }) {
  return middy<Event, unknown, Error, TraceIdContext>()
    .use(traceId(options))
    .use(errorResponse({ headers: { 'content-type': 'application/json' } }))
    .handler(run);
}

const event = (clientTraceId?: string): Event => ({
  headers: clientTraceId === undefined ? {} : { 'x-trace-id': clientTraceId },
  requestContext: { requestId: 'gateway-request-id' },
});

describe('traceId', () => {
  it.each([
    { name: 'a well-formed client id', given: 'client-trace.42', expected: 'client-trace.42' },
    { name: 'no client id', given: undefined, expected: 'gateway-request-id' },
    { name: 'a forged log fragment', given: 'x"}\n{"level":"ERROR', expected: 'gateway-request-id' },
    { name: 'an id over 128 characters', given: 'a'.repeat(129), expected: 'gateway-request-id' },
  ])('echoes $name as $expected, and lets a header the handler set win', async ({ given, expected }) => {
    // Prepare
    const plain = pipeline(async () => ({ statusCode: 200, headers: { 'content-type': 'application/json' }, body: '{}' }));
    const own = pipeline(async () => ({ statusCode: 200, headers: { 'x-trace-id': 'the handler its own' } }));

    // Act
    const answered = (await plain(event(given), {} as TraceIdContext)) as { headers: Record<string, string> };
    const overridden = (await own(event(given), {} as TraceIdContext)) as { headers: Record<string, string> };

    // Assess
    expect(answered.headers).toEqual({ 'x-trace-id': expected, 'content-type': 'application/json' });
    expect(overridden.headers['x-trace-id']).toBe('the handler its own');
  });

  it('neither trusts nor echoes a client id where told not to (WebSocket)', async () => {
    // Prepare
    const handler = pipeline(
      async () => {
        throw new Error(internalDetail);
      },
      { trustClient: false, echo: false },
    );

    // Act
    const answer = (await handler(event('client-trace'), {} as TraceIdContext)) as { headers: Record<string, string>; body: string };

    // Assess
    expect(answer.headers['x-trace-id']).toBeUndefined();
    expect(JSON.parse(answer.body).error.message).toBe('Internal error; quote trace id gateway-request-id');
  });
});

describe('errorResponse', () => {
  it.each([
    { name: 'a 502 HttpError', error: new HttpError(502, 'ai_provider_error', internalDetail), status: 502, code: 'ai_provider_error' },
    { name: 'an Error', error: new Error(internalDetail), status: 500, code: 'internal_error' },
  ])('answers $name with its code, a generic message quoting the trace id, and the trace id header', async ({ error, status, code }) => {
    // Prepare
    const handler = pipeline(async () => {
      throw error;
    });

    // Act
    const answer = (await handler(event('trace-5xx'), {} as TraceIdContext)) as {
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    };

    // Assess
    expect(answer.statusCode).toBe(status);
    expect(answer.headers).toEqual({ 'x-trace-id': 'trace-5xx', 'content-type': 'application/json' });
    expect(answer.body).not.toContain('chat-prod');
    expect(JSON.parse(answer.body)).toEqual({
      error: { code, message: expect.stringMatching(/; quote trace id trace-5xx$/), traceId: 'trace-5xx' },
    });
  });

  it('passes a 4xx through as written, with its own headers (Retry-After) and the trace id', async () => {
    // Prepare
    const handler = pipeline(async () => {
      throw new RateLimitedError(7);
    });

    // Act
    const answer = (await handler(event('trace-429'), {} as TraceIdContext)) as {
      statusCode: number;
      headers: Record<string, string>;
      body: string;
    };

    // Assess
    expect(answer.statusCode).toBe(429);
    expect(answer.headers).toEqual({ 'x-trace-id': 'trace-429', 'content-type': 'application/json', 'Retry-After': '7' });
    expect(JSON.parse(answer.body)).toEqual({
      error: {
        code: 'rate_limited',
        message: 'Rate limit exceeded; retry after 7 s',
        details: { retryAfterSeconds: 7 },
        traceId: 'trace-429',
      },
    });
  });
});
