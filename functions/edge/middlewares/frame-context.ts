import type { Context } from 'aws-lambda';
import type { Connection } from '#shared/db/connection';

/** One client frame as the `$default` router hands it to the frame type's pipeline. */
export interface FrameEvent {
  readonly connection: Connection;
  readonly frame: Record<string, unknown>;
  readonly raw: string;
}

/** What the frame steps put on the context: the parsed frame, and what `prepare` is reading. */
export interface FrameContext extends Context {
  parsed?: unknown;
  prepared?: Promise<unknown>;
}
