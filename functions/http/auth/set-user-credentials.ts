import { setUserCredentials } from '#domain/auth/sessions';
import { httpHandler, noContent } from '#edge/http';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { rolesSchema } from './schemas';

const params = z.object({ userId: idSchema });
const body = z.strictObject({
  password: z.string().check(z.minLength(8, 'must be at least 8 characters'), z.maxLength(1024)),
  roles: z.optional(rolesSchema),
});

export const handler = httpHandler('SetUserCredentials', { params, body }, async ({ params, body, caller }) => {
  await setUserCredentials(caller.projectId, { userId: params.userId, ...body });
  return noContent();
});
