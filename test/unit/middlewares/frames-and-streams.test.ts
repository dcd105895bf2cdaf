import { PassThrough, type Writable } from 'node:stream';
import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { describe, expect, it } from 'vitest';
import { type FrameHandler, FrameRefusal, frameRouter } from '#edge/frames';
import type { Connection } from '#shared/db/connection';
import { HttpError } from '#shared/errors';
import { webSocketFrames } from '#wiring';

/**
 * A frame's pipeline answers what fails after parsing with an `error` frame carrying the frame's
 * references; an SSE route answers what fails before its stream opens with a JSON error carrying
 * the trace id and a CORS header.
 */

const room = { projectId: 'p', userId: 'u', roles: [], connectionId: 'c', roomId: 'r', channel: 'room' } as unknown as Connection;
const others = Object.fromEntries(
  webSocketFrames
    .filter((frame) => !frame.answer && frame.type !== 'message')
    .map((frame) => [frame.type, { parse: () => ({}), run: async () => undefined }]),
);

describe('a frame pipeline', () => {
  const message = (
    run: FrameHandler<{ clientMessageId: string }>['run'],
    prepare?: FrameHandler['prepare'],
  ): FrameHandler<{ clientMessageId: string }> => ({
    parse: (frame) => {
      if (typeof frame.clientMessageId !== 'string') throw new FrameRefusal({ type: 'error', error: { code: 'validation_failed' } });
      if (frame.clientMessageId === 'parser-bug') throw new Error('a bug in parse');
      return { clientMessageId: frame.clientMessageId };
    },
    errorContext: (frame) => ({ clientMessageId: frame.clientMessageId }),
    prepare,
    run,
  });

  it('answers a failure after parsing with an error frame naming the client message, a 5xx by its code only', async () => {
    // Prepare
    const dispatch = frameRouter({
      ...others,
      message: message(async () => {
        throw new HttpError(502, 'ai_provider_error', 'table chat-prod-Table-1ABC');
      }),
    });

    // Act
    const answer = await dispatch(room, '{"type":"message","clientMessageId":"m-1"}');

    // Assess
    expect(answer).toEqual({
      type: 'error',
      clientMessageId: 'm-1',
      error: { code: 'ai_provider_error', message: 'The service could not complete the request' },
    });
  });

  it("answers a refusal with the refusal, lets a parser's bug through, and hands run what prepare read", async () => {
    // Prepare
    const dispatch = frameRouter({
      ...others,
      message: message(
        async (_connection, frame, prepared) => ({ type: 'ack', clientMessageId: frame.clientMessageId, prepared }),
        async () => 'read beside the guards',
      ),
    });

    // Act
    const refused = await dispatch(room, '{"type":"message"}');
    const bug = dispatch(room, '{"type":"message","clientMessageId":"parser-bug"}');
    const acked = await dispatch(room, '{"type":"message","clientMessageId":"m-2"}');

    // Assess
    expect(refused).toEqual({ type: 'error', error: { code: 'validation_failed' } });
    await expect(bug).rejects.toThrow('a bug in parse');
    expect(acked).toEqual({ type: 'ack', clientMessageId: 'm-2', prepared: 'read beside the guards' });
  });
});

describe('an SSE route before its stream opens', () => {
  // Lambda's `awslambda` global: the prelude given to `HttpResponseStream.from` is kept on the stream.
  (globalThis as { awslambda?: unknown }).awslambda = {
    streamifyResponse: (handler: unknown) => handler,
    HttpResponseStream: {
      from(stream: Writable & { prelude?: unknown }, prelude: unknown) {
        stream.prelude = prelude;
        return stream;
      },
    },
  };
  const event = (rawPath: string, headers: Record<string, string> = {}) =>
    ({ rawPath, headers, requestContext: { requestId: 'req-sse', http: { method: 'GET' } } }) as unknown as APIGatewayProxyEventV2;

  it.each([
    { name: 'a path that is not the route', rawPath: '/rooms/lobby/other', status: 404, code: 'not_found' },
    { name: 'no token', rawPath: '/rooms/lobby/stream', status: 401, code: 'missing_credentials' },
  ])('answers $name with a JSON error, the trace id and CORS', async ({ rawPath, status, code }) => {
    // Prepare
    const { streamHandler } = await import('#edge/stream');
    let ran = false;
    const handler = streamHandler('StreamRoom', async () => {
      ran = true;
    }) as unknown as (event: APIGatewayProxyEventV2, stream: Writable, context: Context) => Promise<void>;
    const stream = new PassThrough();
    const chunks: string[] = [];
    stream.on('data', (chunk) => chunks.push(String(chunk)));

    // Act
    await handler(event(rawPath, { 'X-Trace-Id': 'trace-sse' }), stream, {} as Context);

    // Assess
    expect(ran).toBe(false);
    expect((stream as unknown as { prelude: unknown }).prelude).toEqual({
      statusCode: status,
      headers: { 'x-trace-id': 'trace-sse', 'content-type': 'application/json', 'access-control-allow-origin': '*' },
    });
    expect(JSON.parse(chunks.join(''))).toMatchObject({ error: { code } });
    expect(stream.writableEnded).toBe(true);
  });
});
