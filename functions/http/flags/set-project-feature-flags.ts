import { replaceOverrides } from '#domain/flags/feature-flags';
import { httpHandler, ok } from '#edge/http';
import { actorId } from '#shared/auth';
import * as z from '#shared/schema';
import { FEATURE_FLAGS } from '#wiring';

const body = z.strictObject({
  overrides: z.partialRecord(z.enum(FEATURE_FLAGS), z.boolean()),
});

export const handler = httpHandler('SetProjectFeatureFlags', { body }, async ({ body, caller }) =>
  ok({ overrides: await replaceOverrides(caller.projectId, body.overrides, actorId(caller)) }),
);
