import { GetCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import { isConditionFailure } from './transact';

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

type SealedSigningSecret = NonNullable<ProjectItem['signingSecretSealed']>;

/** Stores a new project: `false` when one with its id exists. */
export const putNewProject = (item: ProjectItem): Promise<boolean> => putIfAbsent(item);

/** Reads only the key, so the answer costs the least a read can. */
export async function projectExists(projectId: string): Promise<boolean> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: projectKey(projectId), ProjectionExpression: 'pk' }));
  return Item !== undefined;
}

export async function findProject(projectId: string, options: { consistent?: boolean } = {}): Promise<ProjectItem | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: projectKey(projectId), ConsistentRead: options.consistent }));
  return Item ? projectItem.parse(Item) : undefined;
}

/**
 * Replaces the API key's hash and/or the signing secret (dropping a plaintext one) of an existing
 * project: `false` when there is no such project.
 */
export async function replaceProjectKeys(
  projectId: string,
  keys: { updatedAt: string; apiKeyHash?: string; signingSecretSealed?: SealedSigningSecret },
): Promise<boolean> {
  const sets = ['updatedAt = :now'];
  const values: Record<string, unknown> = { ':now': keys.updatedAt };
  if (keys.apiKeyHash) {
    sets.push('apiKeyHash = :hash');
    values[':hash'] = keys.apiKeyHash;
  }
  if (keys.signingSecretSealed) {
    sets.push('signingSecretSealed = :sealed');
    values[':sealed'] = keys.signingSecretSealed;
  }
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: projectKey(projectId),
        UpdateExpression: `SET ${sets.join(', ')}${keys.signingSecretSealed ? ' REMOVE signingSecret' : ''}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: values,
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/**
 * Stores the signing secret sealed anew in place of `was` (the project's sealed or plaintext
 * secret as read), unless it changed meanwhile: a concurrent rotation is never undone.
 */
export async function resealProjectSigningSecret(
  projectId: string,
  sealed: SealedSigningSecret,
  was: Pick<ProjectItem, 'signingSecretSealed' | 'signingSecret'>,
): Promise<void> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: projectKey(projectId),
        UpdateExpression: 'SET signingSecretSealed = :sealed REMOVE signingSecret',
        ConditionExpression: was.signingSecretSealed ? 'signingSecretSealed.secretCiphertext = :was' : 'signingSecret = :was',
        ExpressionAttributeValues: { ':sealed': sealed, ':was': was.signingSecretSealed?.secretCiphertext ?? was.signingSecret },
      }),
    );
  } catch (error) {
    if (!isConditionFailure(error)) throw error;
  }
}
