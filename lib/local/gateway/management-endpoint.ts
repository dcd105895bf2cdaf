import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ManagementAnswer, type ManagementRequest, payloadTooLarge } from '../management-api';
import { readBody, sendJson } from './http-replies';

/** The `@connections` management API over HTTP, as `ApiGatewayManagementApiClient` calls it. */
export async function serveManagementApi(
  manage: (request: ManagementRequest) => Promise<ManagementAnswer>,
  request: IncomingMessage,
  response: ServerResponse,
  target: { readonly method: string; readonly pathname: string },
): Promise<void> {
  const body = await readBody(request);
  const answer =
    body === 'too_large'
      ? payloadTooLarge
      : await manage({ method: target.method, path: target.pathname, authorization: request.headers.authorization, body });
  if (answer.body) sendJson(response, answer.status, answer.body, answer.errorType ? { 'x-amzn-errortype': answer.errorType } : {});
  else {
    response.writeHead(answer.status);
    response.end();
  }
}
