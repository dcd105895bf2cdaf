import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import type { Role } from '#lib/routes';
import { loadProject, signUserToken } from '#shared/auth';
import { config } from '#shared/config';
import { db, tableName } from '#shared/db/client';
import { type UserCredentialsItem, userCredentialsItem, userCredentialsKey } from '#shared/db/user-credentials';
import { BadRequestError, UnauthorizedError } from '#shared/errors';
import { hashPassword, verifyPassword } from './passwords';

export interface IssuedToken {
  readonly token: string;
  readonly expiresAt: string;
}

/** The requested token lifetime, checked against `TOKEN_MAX_TTL_SECONDS` the same way on every route. */
function tokenLifetime(expiresIn: number | undefined): number {
  const lifetime = expiresIn ?? config.TOKEN_DEFAULT_TTL_SECONDS;
  if (lifetime > config.TOKEN_MAX_TTL_SECONDS) {
    throw new BadRequestError(`expiresIn may be at most ${config.TOKEN_MAX_TTL_SECONDS} seconds`, [
      { field: 'body.expiresIn', message: `must be <= ${config.TOKEN_MAX_TTL_SECONDS}` },
    ]);
  }
  return lifetime;
}

/** Mints a user token for a project whose API key the caller presented. */
export async function issueToken(
  projectId: string,
  input: { userId: string; roles?: readonly Role[]; expiresIn?: number },
): Promise<IssuedToken> {
  const expiresIn = tokenLifetime(input.expiresIn);
  const project = await loadProject(projectId);
  if (!project) throw new UnauthorizedError('invalid_api_key', 'The project no longer exists');
  return signUserToken(project, { projectId, userId: input.userId, roles: input.roles ?? ['member'] }, expiresIn);
}

/** Sets (or replaces) the password a user signs in with, and the roles their sessions carry. */
export async function setUserCredentials(
  projectId: string,
  input: { userId: string; password: string; roles?: readonly Role[] },
): Promise<void> {
  const item: UserCredentialsItem = {
    ...userCredentialsKey(projectId, input.userId),
    projectId,
    userId: input.userId,
    passwordHash: await hashPassword(input.password),
    roles: [...(input.roles ?? ['member'])],
    updatedAt: new Date().toISOString(),
  };
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
}

/**
 * Checks a user's password and returns a session token. Unknown project, unknown user and wrong
 * password give the same answer, so sign-in cannot probe which users exist.
 */
export async function signIn(input: { projectId: string; userId: string; password: string; expiresIn?: number }): Promise<IssuedToken> {
  const expiresIn = tokenLifetime(input.expiresIn);
  const rejected = new UnauthorizedError('invalid_credentials', 'Unknown user or wrong password');
  const project = await loadProject(input.projectId);
  if (!project) throw rejected;
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: userCredentialsKey(input.projectId, input.userId) }));
  const credentials = Item ? userCredentialsItem.parse(Item) : undefined;
  const valid = credentials ? await verifyPassword(input.password, credentials.passwordHash) : false;
  if (!credentials || !valid) throw rejected;
  return signUserToken(project, { projectId: input.projectId, userId: input.userId, roles: credentials.roles as Role[] }, expiresIn);
}
