import type { MiddlewareObj } from '@middy/core';
import { errorFrame, type FrameHandler } from '#edge/frame-handler';
import type { FrameContext, FrameEvent } from '#edge/middlewares/frame-context';

/**
 * The error answer of a frame: any failure after the frame parsed becomes an `error` frame (a 5xx
 * by its code only, `retryAfter` on a rate limit) carrying the frame's own references
 * (`clientMessageId`, `ref`, `event`). A failure while parsing is not the client's frame to
 * answer: it goes on to the `$default` handler's error answer.
 */
export function errorFrameAnswer(handler: FrameHandler): MiddlewareObj<FrameEvent, unknown, Error, FrameContext> {
  return {
    onError: (request) => {
      if (!('parsed' in request.context)) return;
      request.response = errorFrame(request.error, handler.errorContext?.(request.context.parsed) ?? {});
    },
  };
}
