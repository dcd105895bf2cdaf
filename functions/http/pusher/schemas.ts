import { MAX_BATCH_EVENTS, MAX_PUSHER_EVENT_NAME, MAX_TRIGGER_CHANNELS } from '#domain/pusher/trigger';
import { storableJsonObject } from '#shared/json';
import { CHANNEL_NAME_PATTERN } from '#shared/pusher-protocol';
import * as z from '#shared/schema';

/** Pusher's limit on a presence member's `user_info`. */
export const MAX_PRESENCE_INFO_BYTES = 1024;

/** JSON text read as its value, anything else kept as it is, for the schema after it to judge. */
const parsedJson = z.transform((text: string) => {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
});

/** `presenceInfo`: an object, or in a form body the object's JSON text. */
const presenceInfo = z.pipe(
  z.union([storableJsonObject, z.pipe(z.string(), parsedJson)]),
  storableJsonObject.check(
    z.refine(
      (info) => Buffer.byteLength(JSON.stringify(info)) <= MAX_PRESENCE_INFO_BYTES,
      `must be at most ${MAX_PRESENCE_INFO_BYTES} bytes of JSON`,
    ),
  ),
);

/** What pusher-js and Laravel Echo post (form-encoded) or a client sends as JSON. Formats are the domain's checks, with codes of their own. */
export const channelAuthBody = z.strictObject({
  socket_id: z.string().check(z.minLength(1), z.maxLength(200)),
  channel_name: z.string().check(z.minLength(1), z.maxLength(200)),
  presenceInfo: z.optional(presenceInfo),
});

/** Pusher's app ids are numbers. */
export const appParams = z.object({ appId: z.string().check(z.regex(/^\d{1,20}$/, 'must be a Pusher app id (1-20 digits)')) });

/** Every query parameter as sent: the signature covers them all. */
export const signedQuery = z.record(z.string(), z.string());

const eventName = z.string().check(
  z.minLength(1),
  z.maxLength(MAX_PUSHER_EVENT_NAME),
  // The protocol's own events: a client would take a server event of that name for the server's.
  z.refine((name) => !/^pusher(_internal)?:/.test(name), 'pusher: and pusher_internal: names are the protocol’s own'),
);
const channelName = z.string().check(z.regex(CHANNEL_NAME_PATTERN, 'must be a Pusher channel name (1-200 of A-Z a-z 0-9 _ - = @ , . ; :)'));
const socketId = z.string().check(z.minLength(1), z.maxLength(200));
/** Pusher's experimental `info` parameter; accepted and not answered. */
const info = z.optional(z.string().check(z.maxLength(200)));

export const triggerBody = z
  .strictObject({
    name: eventName,
    data: z.string(),
    channels: z.optional(z.array(channelName).check(z.minLength(1), z.maxLength(MAX_TRIGGER_CHANNELS))),
    channel: z.optional(channelName),
    socket_id: z.optional(socketId),
    info,
  })
  .check(z.refine((body) => body.channels !== undefined || body.channel !== undefined, 'channels or channel is required'));

export const batchBody = z.strictObject({
  batch: z
    .array(z.strictObject({ name: eventName, channel: channelName, data: z.string(), socket_id: z.optional(socketId), info }))
    .check(z.minLength(1), z.maxLength(MAX_BATCH_EVENTS)),
});
