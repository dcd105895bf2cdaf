import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { AiNotConfiguredError } from '#domain/ai/assistant';
import { errorFrame } from '#edge/frames';
import { httpHandler } from '#edge/http';
import { wsHandler } from '#edge/ws';
import { BadRequestError, errorAnswer, HttpError, RateLimitedError } from '#shared/errors';
import { withTraceId } from '#shared/request-context';

/**
 * What a client learns from a failure, on every transport: a 4xx as written (the client's to fix),
 * a 5xx by its code only (its message may name our tables, hosts or providers), anything else as
 * `internal_error`; both of the latter with the trace id to quote.
 */

const internalDetail = 'ProvisionedThroughputExceeded on table chat-prod-Table-1ABC at 10.0.3.7';

describe('errorAnswer', () => {
  it.each([
    {
      name: 'a 502 HttpError (ai_provider_error)',
      error: new HttpError(502, 'ai_provider_error', internalDetail),
      status: 502,
      code: 'ai_provider_error',
    },
    { name: 'a 502 HttpError (ai_timeout)', error: new HttpError(502, 'ai_timeout', internalDetail), status: 502, code: 'ai_timeout' },
    { name: 'an Error', error: new Error(internalDetail), status: 500, code: 'internal_error' },
    { name: 'a thrown string', error: internalDetail, status: 500, code: 'internal_error' },
  ])('hides the message of $name and quotes the trace id', ({ error, status, code }) => {
    // Act
    const answer = errorAnswer(error, 'trace-123');

    // Assess
    expect(answer.status).toBe(status);
    expect(answer.body.error.code).toBe(code);
    expect(answer.body.error.message).toContain('trace-123');
    expect(JSON.stringify(answer.body)).not.toContain('chat-prod');
  });

  it('passes the message of a 503 whose cause is a setting (NotConfiguredError): it names the setting to make', () => {
    // Act
    const answer = errorAnswer(new AiNotConfiguredError(), 'trace-123');

    // Assess
    expect(answer.status).toBe(503);
    expect(answer.body.error.code).toBe('ai_not_configured');
    expect(answer.body.error.message).toMatch(/^AI is not configured on this service: set AI_BASE_URL /);
    expect(answer.body.error.message).not.toContain('trace-123');
  });

  it('passes a 4xx message, details and headers through', () => {
    // Act
    const refused = errorAnswer(new BadRequestError('content is required', [{ field: 'body.content', message: 'required' }]), 'trace-400');
    const limited = errorAnswer(new RateLimitedError(7));

    // Assess
    expect(refused).toEqual({
      status: 400,
      body: {
        error: {
          code: 'validation_failed',
          message: 'content is required',
          details: [{ field: 'body.content', message: 'required' }],
          traceId: 'trace-400',
        },
      },
      headers: {},
    });
    expect(limited).toMatchObject({ status: 429, headers: { 'Retry-After': '7' }, body: { error: { code: 'rate_limited' } } });
  });
});

describe('a 5xx HttpError thrown by a route', () => {
  const event = (traceId: string) =>
    ({
      version: '2.0',
      routeKey: 'GET /health',
      rawPath: '/health',
      headers: { 'x-trace-id': traceId },
      requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' }, requestId: 'r' },
    }) as unknown as APIGatewayProxyEventV2;

  it('reaches the HTTP client with its code, a generic message and the trace id', async () => {
    // Prepare
    const handler = httpHandler('GetHealth', {}, async () => {
      throw new HttpError(502, 'ai_provider_error', internalDetail);
    });

    // Act
    const result = (await handler(event('trace-http'), {} as Context)) as APIGatewayProxyStructuredResultV2;

    // Assess
    expect(result.statusCode).toBe(502);
    expect(result.headers).toMatchObject({ 'x-trace-id': 'trace-http' });
    expect(JSON.parse(result.body as string)).toEqual({
      error: {
        code: 'ai_provider_error',
        message: 'The service could not complete the request; quote trace id trace-http',
        traceId: 'trace-http',
      },
    });
  });

  it('reaches a WebSocket handshake and an error frame without its message', async () => {
    // Prepare
    const connect = wsHandler('$connect', async () => {
      throw new HttpError(502, 'ai_provider_error', internalDetail);
    });

    // Act
    const refused = (await connect(
      { requestContext: { connectionId: 'c', requestId: 'trace-ws' } } as never,
      {} as Context,
    )) as APIGatewayProxyStructuredResultV2;
    // A frame is answered inside its socket's `$default` invocation, whose trace id is current there.
    const frame = withTraceId('trace-frame', () =>
      errorFrame(new HttpError(502, 'ai_provider_error', internalDetail), { clientMessageId: 'm-1' }),
    );

    // Assess
    expect(refused.statusCode).toBe(502);
    expect(refused.body).not.toContain('chat-prod');
    expect(JSON.parse(refused.body as string).error).toMatchObject({
      code: 'ai_provider_error',
      message: expect.stringContaining('trace-ws'),
    });
    expect(frame).toEqual({
      type: 'error',
      clientMessageId: 'm-1',
      error: {
        code: 'ai_provider_error',
        message: 'The service could not complete the request; quote trace id trace-frame',
        traceId: 'trace-frame',
      },
    });
  });
});
