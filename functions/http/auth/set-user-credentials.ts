import { z } from 'zod';
import { setUserCredentials } from '#domain/auth/sessions';
import { httpHandler, noContent } from '#shared/http';
import { idSchema } from '#shared/ids';
import { rolesSchema } from './schemas';

const params = z.object({ userId: idSchema });
const body = z.object({ password: z.string().min(8, 'must be at least 8 characters').max(1024), roles: rolesSchema.optional() }).strict();

export const handler = httpHandler('SetUserCredentials', { params, body }, async ({ params, body, caller }) => {
  await setUserCredentials(caller.projectId, { userId: params.userId, ...body });
  return noContent();
});
