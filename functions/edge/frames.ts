import middy from '@middy/core';
import { type FrameHandler, validationRefusal } from '#edge/frame-handler';
import { errorFrameAnswer } from '#edge/middlewares/error-frame';
import type { FrameContext, FrameEvent } from '#edge/middlewares/frame-context';
import { frameParse } from '#edge/middlewares/frame-parse';
import { framePrefetch } from '#edge/middlewares/frame-prefetch';
import { routeGuards } from '#edge/middlewares/route-guards';
import type { Connection } from '#shared/db/connection';
import { traced } from '#shared/errors';
import * as z from '#shared/schema';
import { type FrameRoute, frameRoute, webSocketFrames } from '#wiring';

export { type ErrorContext, errorFrame, type FrameHandler, FrameRefusal, validationRefusal } from '#edge/frame-handler';

const frameKind = z.object({ type: z.string() });

const unsupported = (message: string) => ({ type: 'error', error: traced({ code: 'unsupported_frame', message }) });

/**
 * One frame type's middy pipeline (`functions/edge/middlewares/`): the error frame, the handler's
 * `parse`, its `prepare` started, the entry's flag and rate limit beside it, then `run`.
 */
function framePipeline(route: FrameRoute, handler: FrameHandler) {
  return middy<FrameEvent, unknown, Error, FrameContext>()
    .use(errorFrameAnswer(handler))
    .use(frameParse(handler))
    .use(framePrefetch(handler))
    .use(
      routeGuards<FrameEvent, FrameContext>(route, ({ event: { connection } }) => ({
        projectId: connection.projectId,
        userId: connection.userId,
        connectionId: connection.connectionId,
      })),
    )
    .handler(async ({ connection }, context) => handler.run(connection, context.parsed, await context.prepared));
}

/**
 * Builds the `$default` dispatcher from the frame table and one handler per frame type (middy
 * `ws-router`'s shape, on the frame's `type`), each handler run through its own middy pipeline.
 * Throws at cold start unless the handlers cover the table's function-answered frames exactly, so
 * a frame type cannot be listed without a handler or handled without a listing.
 * The returned function answers a raw frame with the frame to send back, or `undefined`.
 */
// Each handler's own types stay inside it; the router only passes its values along.
export function frameRouter(handlers: Readonly<Record<string, FrameHandler<any, any>>>) {
  // Frames with an `answer` never reach a function on AWS; the router answers them the same way.
  const listed = webSocketFrames
    .filter((frame) => !frame.answer)
    .map((frame) => frame.type)
    .sort();
  const given = Object.keys(handlers).sort();
  if (JSON.stringify(listed) !== JSON.stringify(given)) {
    throw new Error(`Frame handlers [${given.join(', ')}] do not match the frame table [${listed.join(', ')}] (functions/wiring/)`);
  }
  const known = webSocketFrames.map((frame) => frame.type).join(', ');
  type Pipeline = ReturnType<typeof framePipeline>;
  const pipelines = new Map<string, Pipeline>(
    webSocketFrames.flatMap((route) => {
      const handler = handlers[route.type];
      return handler ? [[route.type, framePipeline(route, handler)] as const] : [];
    }),
  );

  return async (connection: Connection, raw: string): Promise<unknown> => {
    let frame: unknown;
    try {
      frame = JSON.parse(raw);
    } catch {
      return { type: 'error', error: traced({ code: 'invalid_json', message: 'Frames are JSON objects' }) };
    }
    const kind = frameKind.safeParse(frame);
    if (!kind.success) return validationRefusal(kind.error.issues).answer;
    const route: FrameRoute | undefined = frameRoute(kind.data.type);
    if (!route) return unsupported(`Unknown frame type ${JSON.stringify(kind.data.type).slice(0, 80)}; use ${known}`);
    const channel = connection.roomId ? 'room' : 'user';
    if (!route.channels.includes(channel)) {
      return unsupported(
        `The ${channel} channel does not take ${route.type} frames; it accepts ${webSocketFrames
          .filter((f) => f.channels.includes(channel))
          .map((f) => f.type)
          .join(', ')}`,
      );
    }
    if (route.answer) return route.answer;
    const pipeline = pipelines.get(route.type) as Pipeline;
    // In-process, under the `$default` invocation: no Lambda context of its own, so no early timeout either.
    return pipeline({ connection, frame: frame as Record<string, unknown>, raw }, {} as FrameContext);
  };
}
