import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** An error an operation answers with: its name goes to `X-Amzn-ErrorType` and `__type`, as AWS sends it. */
export class AwsJsonError extends Error {
  constructor(
    readonly errorType: string,
    message: string,
  ) {
    super(message);
  }
}

/** The operations of one service, by their `X-Amz-Target`; each answers with the response body or throws {@link AwsJsonError}. */
export type AwsJsonOperations = Readonly<Record<string, (body: Record<string, unknown>) => unknown>>;

export interface AwsJsonServer {
  readonly endpoint: string;
  close(): Promise<void>;
}

function send(response: ServerResponse, version: '1.0' | '1.1', status: number, body: unknown, errorType?: string): void {
  response.writeHead(status, {
    'content-type': `application/x-amz-json-${version}`,
    ...(errorType ? { 'x-amzn-errortype': errorType } : {}),
  });
  response.end(JSON.stringify(errorType ? { __type: errorType, message: (body as { message?: string }).message } : body));
}

async function readBody(request: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
}

/**
 * A local stand-in speaking the AWS JSON protocol to the real SDK clients, on a free loopback port:
 * the operation named in `X-Amz-Target` gets the parsed body; an unknown operation, a body that is
 * not JSON or an {@link AwsJsonError} become the error answers the SDK maps to its exceptions.
 */
export async function serveAwsJson(version: '1.0' | '1.1', operations: AwsJsonOperations): Promise<AwsJsonServer> {
  const server = createServer((request, response) => {
    const target = String(request.headers['x-amz-target'] ?? '');
    readBody(request)
      .then((body) => {
        const operation = operations[target];
        if (!operation) return send(response, version, 400, { message: `Unsupported operation ${target}` }, 'UnknownOperationException');
        try {
          send(response, version, 200, operation(body));
        } catch (error) {
          if (!(error instanceof AwsJsonError)) throw error;
          send(response, version, 400, { message: error.message }, error.errorType);
        }
      })
      .catch((error: Error) => send(response, version, 400, { message: error.message }, 'SerializationException'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
