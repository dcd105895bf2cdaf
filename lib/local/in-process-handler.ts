/** An SDK request as it reaches an in-process handler: the body always bytes. */
export interface InProcessRequest {
  readonly method: string;
  readonly path: string;
  /** The query string with its `?`, or empty. */
  readonly search: string;
  readonly headers: Record<string, string>;
  readonly body: Buffer;
}

export interface InProcessResponse {
  readonly statusCode: number;
  readonly headers: Record<string, string>;
  readonly body: Uint8Array;
}

/** The part of the SDK's `HttpHandler` a client calls. */
export interface InProcessRequestHandler {
  handle(request: {
    method: string;
    path: string;
    query?: Record<string, string | string[] | null>;
    headers: Record<string, string>;
    body?: unknown;
  }): Promise<{ response: InProcessResponse }>;
  updateHttpClientConfig(): void;
  httpHandlerConfigs(): Record<string, never>;
  destroy(): void;
}

/**
 * An SDK request handler that answers in this process, where a stand-in runs: the SDK's own work
 * (serialising, signing, parsing answers and errors) happens, the loopback socket round trip does not.
 */
export function inProcessRequestHandler(answer: (request: InProcessRequest) => Promise<InProcessResponse>): InProcessRequestHandler {
  return {
    async handle(request) {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(request.query ?? {})) {
        for (const item of [value ?? ''].flat()) query.append(name, item);
      }
      const { body } = request;
      const response = await answer({
        method: request.method,
        path: request.path,
        search: query.size ? `?${query}` : '',
        headers: request.headers,
        // A Uint8Array that is not a Buffer would be taken for an object (and sent as JSON) downstream.
        body:
          body instanceof Uint8Array
            ? Buffer.from(body.buffer, body.byteOffset, body.byteLength)
            : Buffer.from(typeof body === 'string' ? body : ''),
      });
      return { response };
    },
    updateHttpClientConfig() {},
    httpHandlerConfigs: () => ({}),
    destroy() {},
  };
}
