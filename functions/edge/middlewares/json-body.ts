import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { BadRequestError, PayloadTooLargeError } from '#shared/errors';

/** Largest JSON body accepted; batch imports of 100 rows of 4,000 characters fit. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The request's body as JSON, whatever its content type says (clients forget it; middy's stock
 * `http-json-body-parser` answers those 415): 413 over {@link MAX_BODY_BYTES}, 400 `invalid_json`
 * when it does not parse, `undefined` when there is none.
 */
export function readJsonBody(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded'>): unknown {
  if (!event.body) return undefined;
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw new PayloadTooLargeError(`The body exceeds ${MAX_BODY_BYTES} bytes`);
  try {
    return JSON.parse(raw);
  } catch {
    throw new BadRequestError('The body is not valid JSON', undefined, 'invalid_json');
  }
}
