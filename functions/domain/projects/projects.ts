import { randomBytes } from 'node:crypto';
import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { forgetProject, hashApiKey } from '#shared/auth';
import { db, isConditionFailure, tableName } from '#shared/db/client';
import { type ProjectItem, projectKey } from '#shared/db/project';
import { ConflictError, NotFoundError } from '#shared/errors';

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
    signingSecret,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await db.send(new PutCommand({ TableName: tableName, Item: item, ConditionExpression: 'attribute_not_exists(pk)' }));
  } catch (error) {
    if (isConditionFailure(error)) throw new ConflictError('project_exists', `Project ${projectId} already exists`);
    throw error;
  }
  return { projectId, name: input.name, apiKey, signingSecret };
}

export async function projectExists(projectId: string): Promise<boolean> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: projectKey(projectId), ProjectionExpression: 'pk' }));
  return Item !== undefined;
}

/**
 * Replaces the API key and/or the signing secret. The old ones stop working at once in this
 * instance and within the cache lifetime (`CACHE_TTL_MS` × 12) everywhere else.
 */
export async function rotateProjectKeys(
  projectId: string,
  what: { apiKey: boolean; signingSecret: boolean; newApiKey?: string },
): Promise<{ projectId: string; apiKey?: string; signingSecret?: string }> {
  const apiKey = what.apiKey ? (what.newApiKey ?? newApiKey(projectId)) : undefined;
  const signingSecret = what.signingSecret ? newSigningSecret() : undefined;
  const sets = ['updatedAt = :now'];
  const values: Record<string, string> = { ':now': new Date().toISOString() };
  if (apiKey) {
    sets.push('apiKeyHash = :hash');
    values[':hash'] = hashApiKey(apiKey);
  }
  if (signingSecret) {
    sets.push('signingSecret = :secret');
    values[':secret'] = signingSecret;
  }
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: projectKey(projectId),
        UpdateExpression: `SET ${sets.join(', ')}`,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: values,
      }),
    );
  } catch (error) {
    if (isConditionFailure(error)) throw new NotFoundError('project_not_found', 'Project not found');
    throw error;
  }
  forgetProject(projectId);
  return { projectId, ...(apiKey ? { apiKey } : {}), ...(signingSecret ? { signingSecret } : {}) };
}
