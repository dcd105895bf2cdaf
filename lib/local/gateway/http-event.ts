import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import type { HttpRoute } from '#wiring';

export function headerRecord(request: IncomingMessage): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value !== undefined) headers[name] = Array.isArray(value) ? value.join(',') : value;
  }
  return headers;
}

export function queryRecord(url: URL): Record<string, string> | undefined {
  const query: Record<string, string> = {};
  for (const key of new Set(url.searchParams.keys())) query[key] = url.searchParams.getAll(key).join(',');
  return Object.keys(query).length ? query : undefined;
}

/** API Gateway base64-encodes a body unless its content type reads as text. */
const isTextual = (contentType: string | undefined) => !contentType || /json|text|xml|x-www-form-urlencoded|javascript/i.test(contentType);

/** The request as a Lambda behind an HTTP API (payload format 2.0), or behind a function URL, receives it. */
export function httpApiEvent(input: {
  readonly request: IncomingMessage;
  readonly url: URL;
  readonly method: string;
  readonly route: HttpRoute;
  readonly pathParameters: Record<string, string>;
  readonly body: Buffer;
  readonly domainName: string;
}): APIGatewayProxyEventV2 {
  const { request, url, method, route, pathParameters, body } = input;
  const headers = headerRecord(request);
  const textual = isTextual(headers['content-type']);
  const now = new Date();
  // A function URL's event names no route and carries no path parameters, unlike the HTTP API's.
  const viaFunctionUrl = route.transport === 'functionUrl';
  const routeKey = viaFunctionUrl ? '$default' : `${route.method} ${route.path}`;
  return {
    version: '2.0',
    routeKey,
    rawPath: url.pathname,
    rawQueryString: url.search.slice(1),
    headers,
    queryStringParameters: queryRecord(url),
    pathParameters: Object.keys(pathParameters).length && !viaFunctionUrl ? pathParameters : undefined,
    body: body.length ? (textual ? body.toString('utf8') : body.toString('base64')) : undefined,
    isBase64Encoded: body.length > 0 && !textual,
    requestContext: {
      accountId: '000000000000',
      apiId: 'local',
      domainName: input.domainName,
      domainPrefix: 'local',
      http: {
        method,
        path: url.pathname,
        protocol: `HTTP/${request.httpVersion}`,
        sourceIp: request.socket.remoteAddress ?? '127.0.0.1',
        userAgent: headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey,
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
  };
}
