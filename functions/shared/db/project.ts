import * as z from '#shared/schema';
import { projectPk } from './keys';

/**
 * A tenant. Holds the hash of its API key and the secret that signs its users' JWTs, sealed under
 * the `signing-key` secret and bound to the project (`functions/shared/generated-keys.ts`).
 * Projects written before sealing hold `signingSecret` in plain until their keys are next written.
 */
export const projectItem = z.object({
  pk: z.string(),
  sk: z.literal('PROJECT'),
  projectId: z.string(),
  name: z.string(),
  apiKeyHash: z.string(),
  signingSecretSealed: z.optional(z.object({ secretCiphertext: z.string(), secretIv: z.string(), secretKeyId: z.string() })),
  /** The plaintext of projects created before sealing. */
  signingSecret: z.optional(z.string()),
  createdAt: z.string(),
  updatedAt: z.string(),
});
export type ProjectItem = z.infer<typeof projectItem>;

export const projectKey = (projectId: string) => ({ pk: projectPk(projectId), sk: 'PROJECT' as const });

/** The signing secret's sealed value opens on this project's item only. */
export const signingSecretBinding = (projectId: string) => ({ purpose: 'project-signing-secret', projectId, recordId: 'PROJECT' }) as const;
