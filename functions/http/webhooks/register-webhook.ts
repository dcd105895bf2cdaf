import { registerWebhook } from '#domain/webhooks/registrations';
import { created, httpHandler } from '#edge/http';
import { actorId } from '#shared/auth';
import * as z from '#shared/schema';

const body = z.strictObject({
  url: z.string().check(z.minLength(1), z.maxLength(2048)),
  eventTypes: z
    .array(z.string().check(z.minLength(1), z.maxLength(100)))
    .check(z.minLength(1, 'name at least one event type'), z.maxLength(50)),
  secret: z.optional(z.string().check(z.minLength(16, 'must be at least 16 characters'), z.maxLength(256))),
});

/** 201 with the registration and its secret, which is never shown again. */
export const handler = httpHandler('RegisterWebhook', { body }, async ({ body, caller }) =>
  created(await registerWebhook(caller.projectId, body, actorId(caller))),
);
