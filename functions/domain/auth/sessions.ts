import { loadProject, signUserToken } from '#shared/auth';
import { config } from '#shared/config';
import { clearSignInFailures } from '#shared/db/sign-in-failures';
import { findUserCredentials, putUserCredentials, replacePasswordHash, userCredentialsKey } from '#shared/db/user-credentials';
import { BadRequestError, UnauthorizedError } from '#shared/errors';
import { isGuestUserId, refuseReservedId } from '#shared/ids';
import { type Role, SUBJECT_ACTING_ROLES } from '#wiring';
import { hashPassword, needsRehash, verifyPassword } from './passwords';
import { checkSignInLock, recordSignInFailure } from './sign-in-lockout';

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

/**
 * Mints a user token for a project whose API key the caller presented. `sub` names the subject the
 * GDPR routes act on; it may differ from `userId` only in a token with the admin or owner role (an
 * admin acting for a subject, `functions/domain/privacy/subject.ts`): a member's token acts for
 * its own user only, so minting one that names another subject would only mint a token every
 * GDPR route refuses.
 */
export async function issueToken(
  projectId: string,
  input: { userId: string; roles?: readonly Role[]; expiresIn?: number; sub?: string },
): Promise<IssuedToken> {
  refuseReservedId('user', input.userId, 'body.userId');
  // A guest is a person too: an admin may act for one on the GDPR routes (export, erasure).
  if (input.sub !== undefined && !isGuestUserId(input.sub)) refuseReservedId('user', input.sub, 'body.sub');
  const roles = input.roles ?? ['member'];
  if (input.sub !== undefined && input.sub !== input.userId && !roles.some((role) => SUBJECT_ACTING_ROLES.includes(role))) {
    throw new BadRequestError('Only a token with the admin or owner role may name another subject than its user', [
      { field: 'body.sub', message: 'must equal userId unless roles include admin or owner' },
    ]);
  }
  const expiresIn = tokenLifetime(input.expiresIn);
  const project = await loadProject(projectId);
  if (!project) throw new UnauthorizedError('invalid_api_key', 'The project no longer exists');
  return signUserToken(project, { projectId, userId: input.userId, roles, sub: input.sub }, expiresIn);
}

/** Sets (or replaces) the password a user signs in with, and the roles their sessions carry. */
export async function setUserCredentials(
  projectId: string,
  input: { userId: string; password: string; roles?: readonly Role[] },
): Promise<void> {
  refuseReservedId('user', input.userId, 'path.userId');
  await putUserCredentials({
    ...userCredentialsKey(projectId, input.userId),
    projectId,
    userId: input.userId,
    passwordHash: await hashPassword(input.password),
    roles: [...(input.roles ?? ['member'])],
    updatedAt: new Date().toISOString(),
  });
}

/**
 * Checks a user's password and returns a session token. Unknown project, unknown user and wrong
 * password give the same answer after the same scrypt derivation, so sign-in cannot probe which
 * users exist, by the answer or by its time. Failures count towards a lockout of the (project,
 * user id) (`sign-in-lockout.ts`); a success forgets them, and replaces a hash made with older
 * parameters.
 */
export async function signIn(input: { projectId: string; userId: string; password: string; expiresIn?: number }): Promise<IssuedToken> {
  const { projectId, userId, password } = input;
  const expiresIn = tokenLifetime(input.expiresIn);
  const rejected = new UnauthorizedError('invalid_credentials', 'Unknown user or wrong password');
  const project = await loadProject(projectId);
  if (!project) {
    // No tenant to lock anything in; the per-IP limit bounds these.
    await verifyPassword(password, undefined);
    throw rejected;
  }
  const { failuresOnRecord } = await checkSignInLock(projectId, userId);
  const credentials = await findUserCredentials(projectId, userId);
  const valid = await verifyPassword(password, credentials?.passwordHash);
  if (!credentials || !valid) {
    await recordSignInFailure(projectId, userId);
    throw rejected;
  }
  if (failuresOnRecord) await clearSignInFailures(projectId, userId);
  if (needsRehash(credentials.passwordHash)) {
    await replacePasswordHash(projectId, userId, credentials.passwordHash, await hashPassword(password));
  }
  return signUserToken(project, { projectId, userId, roles: credentials.roles as Role[] }, expiresIn);
}
