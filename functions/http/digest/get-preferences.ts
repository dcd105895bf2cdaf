import { getDigestPreferences } from '#domain/digest/preferences';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('GetDigestPreferences', {}, async ({ user }) =>
  ok(await getDigestPreferences(user.projectId, user.userId)),
);
