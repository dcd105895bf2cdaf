import * as z from '#shared/schema';
import { projectPk } from './keys';

/** A tenant. Holds the hash of its API key and the secret that signs its users' JWTs. */
export const projectItem = z.object({
  pk: z.string(),
  sk: z.literal('PROJECT'),
  projectId: z.string(),
  name: z.string(),
  apiKeyHash: z.string(),
  signingSecret: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ProjectItem = z.infer<typeof projectItem>;

export const projectKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'PROJECT' as const });
