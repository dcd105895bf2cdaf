import { randomBytes } from 'node:crypto';
import { forgetProject, hashApiKey } from '#shared/auth';
import {
  findProject,
  type ProjectItem,
  projectKey,
  putNewProject,
  replaceProjectKeys,
  resealProjectSigningSecret,
  signingSecretBinding,
} from '#shared/db/project';
import { ConflictError, NotFoundError } from '#shared/errors';
import { generatedKeyIsStale, openGeneratedKey, sealGeneratedKey } from '#shared/generated-keys';

const newApiKey = (projectId: string) => `ck_${projectId}_${randomBytes(24).toString('base64url')}`;
const newSigningSecret = () => randomBytes(32).toString('base64url');

export interface ProjectCredentials {
  readonly projectId: string;
  readonly name: string;
  /** Shown once: only its hash is stored. */
  readonly apiKey: string;
  /** HS256 secret for the project's user JWTs, so the customer's backend can mint tokens itself. */
  readonly signingSecret: string;
}

/**
 * Creates a tenant with a fresh API key and signing secret. `apiKey` may be supplied (the local
 * runtime's `CHAT_API_KEY`); it must then carry this project's id.
 */
export async function createProject(input: { name: string; projectId?: string; apiKey?: string }): Promise<ProjectCredentials> {
  const projectId = input.projectId ?? `prj-${randomBytes(6).toString('hex')}`;
  const apiKey = input.apiKey ?? newApiKey(projectId);
  const signingSecret = newSigningSecret();
  const now = new Date().toISOString();
  const item: ProjectItem = {
    ...projectKey(projectId),
    projectId,
    name: input.name,
    apiKeyHash: hashApiKey(apiKey),
    signingSecretSealed: await sealGeneratedKey(signingSecret, signingSecretBinding(projectId)),
    createdAt: now,
    updatedAt: now,
  };
  if (!(await putNewProject(item))) throw new ConflictError('project_exists', `Project ${projectId} already exists`);
  return { projectId, name: input.name, apiKey, signingSecret };
}

export { projectExists } from '#shared/db/project';

/**
 * Replaces the API key and/or the signing secret. The old ones stop working at once in this
 * instance and within the cache lifetime (`CACHE_TTL_MS` × 12) everywhere else. A signing secret
 * that is kept is sealed again if it is in plain or under a key no longer current, so a call that
 * replaces nothing (`apiKey: false`) moves a project onto the current `signing-key` key.
 */
export async function rotateProjectKeys(
  projectId: string,
  what: { apiKey: boolean; signingSecret: boolean; newApiKey?: string },
): Promise<{ projectId: string; apiKey?: string; signingSecret?: string }> {
  const apiKey = what.apiKey ? (what.newApiKey ?? newApiKey(projectId)) : undefined;
  const signingSecret = what.signingSecret ? newSigningSecret() : undefined;
  const updatedAt = new Date().toISOString();
  const replaced = await replaceProjectKeys(projectId, {
    updatedAt,
    ...(apiKey ? { apiKeyHash: hashApiKey(apiKey) } : {}),
    ...(signingSecret ? { signingSecretSealed: await sealGeneratedKey(signingSecret, signingSecretBinding(projectId)) } : {}),
  });
  if (!replaced) throw new NotFoundError('project_not_found', 'Project not found');
  if (!signingSecret) await resealSigningSecret(projectId);
  forgetProject(projectId);
  return { projectId, ...(apiKey ? { apiKey } : {}), ...(signingSecret ? { signingSecret } : {}) };
}

/**
 * Seals a project's signing secret again when it is stored in plain (written before sealing) or
 * under a `signing-key` key that is no longer current. Conditional on the value it read, so a
 * concurrent rotation is never undone.
 */
async function resealSigningSecret(projectId: string): Promise<void> {
  const project = await findProject(projectId, { consistent: true });
  if (!project) return;
  const sealed = project.signingSecretSealed;
  if (sealed && !(await generatedKeyIsStale(sealed))) return;
  const binding = signingSecretBinding(projectId);
  const plaintext = sealed ? await openGeneratedKey(sealed, binding) : project.signingSecret;
  if (plaintext === undefined) return;
  await resealProjectSigningSecret(projectId, await sealGeneratedKey(plaintext, binding), project);
}
