import { idSchema } from '#shared/ids';
import { storableJsonObject } from '#shared/json';
import * as z from '#shared/schema';

export const userParams = z.object({ userId: idSchema });

/** Event names; `client-` is reserved for events clients send over the WebSocket. */
export const eventName = z.string().check(
  z.regex(/^[A-Za-z0-9_.:-]{1,64}$/, 'must be 1-64 characters of letters, digits and _ . : -'),
  z.refine((name) => !name.startsWith('client-'), 'client- names are reserved for client events'),
);

export const MAX_EVENT_DATA_BYTES = 10 * 1024;

/** Event payloads: a JSON object of at most 10 KB, small enough for every socket it reaches, and storable (no empty key). */
export const eventData = z._default(
  storableJsonObject.check(
    z.refine(
      (data) => Buffer.byteLength(JSON.stringify(data)) <= MAX_EVENT_DATA_BYTES,
      `must be at most ${MAX_EVENT_DATA_BYTES} bytes of JSON`,
    ),
  ),
  {},
);

export const watchTarget = z.strictObject({ type: z.enum(['room', 'user']), targetId: idSchema });
