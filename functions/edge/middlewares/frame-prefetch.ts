import type { MiddlewareObj } from '@middy/core';
import type { FrameHandler } from '#edge/frame-handler';
import type { FrameContext, FrameEvent } from '#edge/middlewares/frame-context';

/**
 * Starts the frame type's `prepare` (the reads `run` needs) without waiting, so it runs beside the
 * route guards that follow: a round trip saved, and simply unused when a guard says no. The
 * handler awaits `context.prepared`.
 */
export function framePrefetch(handler: FrameHandler): MiddlewareObj<FrameEvent, unknown, Error, FrameContext> {
  return {
    before: ({ event, context }) => {
      const prepared = handler.prepare?.(event.connection, context.parsed);
      // Refused by a guard, nobody awaits it: its failure must not surface as an unhandled rejection.
      prepared?.catch(() => undefined);
      context.prepared = prepared;
    },
  };
}
