import type { ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import { withoutCorsHeaders } from './gateway/cors';

const STREAMING = Symbol.for('aws.lambda.runtime.handler.streaming');

interface Prelude {
  statusCode: number;
  headers?: Record<string, string>;
}

/**
 * The body of a streamed response: the Writable a streaming handler receives. Its prelude (status
 * and headers) is written on `HttpResponseStream.from`, or as 200 with the first byte, as Lambda does.
 */
export class LocalResponseStream extends Writable {
  private headersWritten = false;

  constructor(private readonly response: ServerResponse) {
    super();
    // The client went away: the handler's stream closes, so its loops stop.
    response.once('close', () => this.destroy());
  }

  setPrelude(prelude: Prelude): void {
    if (this.headersWritten) return;
    this.headersWritten = true;
    // A function URL with CORS settings answers with its own CORS headers (set on `response` by the gateway), not the function's.
    this.response.writeHead(prelude.statusCode, withoutCorsHeaders(prelude.headers ?? {}));
    // Headers go out now, before the first event, so EventSource sees the stream open.
    this.response.flushHeaders();
  }

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    if (!this.headersWritten) this.setPrelude({ statusCode: 200 });
    this.response.write(chunk, (error) => callback(error ?? null));
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (!this.headersWritten) this.setPrelude({ statusCode: 200 });
    this.response.end(() => callback());
  }
}

/**
 * Lambda's Node.js runtime gives streaming functions an `awslambda` global; handler modules call
 * `awslambda.streamifyResponse` when they load, so this must be installed before any is imported.
 */
export function installAwsLambdaGlobal(): void {
  // Merged, not replaced or skipped: the AWS SDK's invoke store creates an empty `awslambda` first.
  const target = globalThis as { awslambda?: Record<string, unknown> };
  target.awslambda ??= {};
  target.awslambda.streamifyResponse ??= <F extends object>(handler: F): F => Object.assign(handler, { [STREAMING]: 'response' });
  target.awslambda.HttpResponseStream ??= {
    from(stream: Writable, prelude: Prelude): Writable {
      if (stream instanceof LocalResponseStream) stream.setPrelude(prelude);
      return stream;
    },
  };
}

export const isStreamingHandler = (handler: unknown) => typeof handler === 'function' && STREAMING in handler;
