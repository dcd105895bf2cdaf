import { replaceOverrides } from '#domain/flags/feature-flags';
import { FEATURE_FLAGS } from '#lib/routes';
import { actorId } from '#shared/auth';
import { httpHandler, ok } from '#shared/http';
import * as z from '#shared/schema';

const body = z.strictObject({
  overrides: z.partialRecord(z.enum(FEATURE_FLAGS), z.boolean()),
});

export const handler = httpHandler('SetProjectFeatureFlags', { body }, async ({ body, caller }) =>
  ok({ overrides: await replaceOverrides(caller.projectId, body.overrides, actorId(caller)) }),
);
