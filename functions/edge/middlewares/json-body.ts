import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { headerValue } from '#edge/headers';
import { BadRequestError, PayloadTooLargeError } from '#shared/errors';

/** Largest JSON body accepted; batch imports of 100 rows of 4,000 characters fit. */
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The request's body as JSON, whatever its content type says (clients forget it; middy's stock
 * `http-json-body-parser` answers those 415): 413 over {@link MAX_BODY_BYTES}, 400 `invalid_json`
 * when it does not parse, `undefined` when there is none.
 */
export function readJsonBody(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded'>): unknown {
  const raw = bodyText(event);
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    throw new BadRequestError('The body is not valid JSON', undefined, 'invalid_json');
  }
}

function bodyText(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded'>): string | undefined {
  if (!event.body) return undefined;
  const raw = event.isBase64Encoded ? Buffer.from(event.body, 'base64').toString('utf8') : event.body;
  if (Buffer.byteLength(raw) > MAX_BODY_BYTES) throw new PayloadTooLargeError(`The body exceeds ${MAX_BODY_BYTES} bytes`);
  return raw;
}

const FORM_TYPE = /^application\/x-www-form-urlencoded\s*(;|$)/i;

/**
 * The body of a route that also takes HTML form encoding (`form: true` in its schemas: Pusher
 * clients post `/auth/channel` as `application/x-www-form-urlencoded`): a form body, by its
 * content type, becomes an object of its fields (a repeated field keeps its last value), anything
 * else is read as JSON. Each field is a string; its schema says what more it must be.
 */
export function readFormOrJsonBody(event: Pick<APIGatewayProxyEventV2, 'body' | 'isBase64Encoded' | 'headers'>): unknown {
  const type = headerValue(event.headers, 'content-type');
  if (!type || !FORM_TYPE.test(type)) return readJsonBody(event);
  const raw = bodyText(event);
  return raw === undefined ? undefined : Object.fromEntries(new URLSearchParams(raw));
}
