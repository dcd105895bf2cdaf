import * as z from '#shared/schema';
import { userPk } from './keys';

/** A user's sign-in secret (scrypt) and the roles their session tokens carry. */
export const userCredentialsItem = z.object({
  pk: z.string(),
  sk: z.literal('CREDENTIALS'),
  projectId: z.string(),
  userId: z.string(),
  passwordHash: z.string(),
  roles: z.array(z.string()),
  updatedAt: z.string(),
});
export type UserCredentialsItem = z.infer<typeof userCredentialsItem>;

export const userCredentialsKey = (projectId: string, userId: string) => ({
  pk: userPk(projectId, userId),
  sk: 'CREDENTIALS' as const,
});
