import type { MiddlewareObj } from '@middy/core';
import { type FrameHandler, FrameRefusal } from '#edge/frame-handler';
import type { FrameContext, FrameEvent } from '#edge/middlewares/frame-context';

/**
 * The frame type's `parse` (its zod schema and limits): the parsed frame goes on `context.parsed`;
 * a {@link FrameRefusal} ends the pipeline with its `error` frame as the answer, before the guards
 * count the frame against a rate limit.
 */
export function frameParse(handler: FrameHandler): MiddlewareObj<FrameEvent, unknown, Error, FrameContext> {
  return {
    before: ({ event, context }) => {
      try {
        context.parsed = handler.parse(event.frame, event.raw);
      } catch (error) {
        if (error instanceof FrameRefusal) return error.answer;
        throw error;
      }
      return undefined;
    },
  };
}
