import { updateDigestPreferences } from '#domain/digest/preferences';
import { httpHandler, ok } from '#edge/http';
import { preferencesPatch } from './schemas';

export const handler = httpHandler('UpdateDigestPreferences', { body: preferencesPatch }, async ({ body, user }) =>
  ok(await updateDigestPreferences(user.projectId, user.userId, body)),
);
