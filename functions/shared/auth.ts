import { createHash } from 'node:crypto';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { decodeJwt, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { TtlCache } from '#shared/cache';
import { config } from '#shared/config';
import { db, tableName } from '#shared/db/client';
import { type ProjectItem, projectItem, projectKey, signingSecretBinding } from '#shared/db/project';
import { ForbiddenError, UnauthorizedError } from '#shared/errors';
import { openGeneratedKey } from '#shared/generated-keys';
import { GUEST_USER_PREFIX, idSchema, PROJECT_ID_PATTERN, reservedPrefixOf } from '#shared/ids';
import { logger } from '#shared/logger';
import { ROLES, type Role } from '#wiring';
import { constantTimeEqual } from './constant-time';

/** A project user, from a verified JWT. */
export interface UserPrincipal {
  readonly kind: 'user';
  readonly projectId: string;
  readonly userId: string;
  readonly roles: readonly Role[];
  /**
   * The token's `sub` where it names another user than `userId`: the subject an admin acts for on
   * the GDPR routes (`subjectOf`). Absent when `sub` is absent or equals `userId`.
   */
  readonly subject?: string;
  /**
   * The site origin the token is bound to (a guest session's, `POST /auth/guest`): a request that
   * presents it with another `Origin` is refused before any route runs.
   */
  readonly origin?: string;
}

/** A customer's backend, from a project API key: admin rights in its own project only. */
export interface ServicePrincipal {
  readonly kind: 'service';
  readonly projectId: string;
}

export type Principal = UserPrincipal | ServicePrincipal;

const roleRank = (role: Role) => ROLES.indexOf(role);

/** The caller's highest role; a service principal outranks every user. */
export function hasRole(principal: Principal, minRole: Role): boolean {
  if (principal.kind === 'service') return true;
  return principal.roles.some((role) => roleRank(role) >= roleRank(minRole));
}

export function requireRole(principal: Principal, minRole: Role): void {
  if (!hasRole(principal, minRole)) throw new ForbiddenError(`This action needs the ${minRole} role or higher`);
}

export const isProjectAdmin = (principal: Principal) => hasRole(principal, 'admin');

/** A user's own channel, watchlist and connections: that user, a project admin or the API key. */
export function requireSelfOrAdmin(principal: Principal, userId: string): void {
  if (principal.kind === 'user' && principal.userId === userId) return;
  if (isProjectAdmin(principal)) return;
  throw new ForbiddenError("Only the user or a project admin may act on this user's channel");
}

/** The user the GDPR routes act on: the token's `sub`, which is `userId` unless the token names another subject. */
export const subjectOf = (principal: UserPrincipal) => principal.subject ?? principal.userId;

/** `sub` of a service principal, for audit fields. */
export const actorId = (principal: Principal) => (principal.kind === 'user' ? principal.userId : 'service');

const projectCache = new TtlCache<ProjectItem>(Math.max(config.CACHE_TTL_MS, 1000) * 12);

/** Reads a project (cached per instance); `undefined` when it does not exist. */
export async function loadProject(projectId: string): Promise<ProjectItem | undefined> {
  // Callers pass ids from unverified input (a JWT's claim before its signature is checked): one
  // that cannot be a project's is no project, not a key DynamoDB refuses.
  if (!PROJECT_ID_PATTERN.test(projectId)) return undefined;
  const cached = projectCache.get(projectId);
  if (cached) return cached;
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: projectKey(projectId) }));
  if (!Item) return undefined;
  const project = projectItem.parse(Item);
  projectCache.set(projectId, project);
  return project;
}

/** Called by whoever rotates a project's keys so this instance stops trusting the old ones at once. */
export function forgetProject(projectId: string): void {
  projectCache.delete(projectId);
}

export const hashApiKey = (apiKey: string) => createHash('sha256').update(apiKey).digest('hex');

export { constantTimeEqual };

/** API keys read `ck_<projectId>_<secret>`: the project id lets one GetItem find the hash to compare. */
export const API_KEY_PATTERN = /^ck_([a-z0-9][a-z0-9-]{1,62})_([A-Za-z0-9_-]{20,})$/;

export async function authenticateApiKey(apiKey: string): Promise<ServicePrincipal> {
  const match = API_KEY_PATTERN.exec(apiKey);
  const projectId = match?.[1];
  if (!projectId) throw new UnauthorizedError('invalid_api_key', 'The API key is malformed');
  const project = await loadProject(projectId);
  if (!project || !constantTimeEqual(project.apiKeyHash, hashApiKey(apiKey))) {
    throw new UnauthorizedError('invalid_api_key', 'The API key is not valid');
  }
  return { kind: 'service', projectId };
}

const ALGORITHMS = ['HS256'];
const secretBytes = (secret: string) => new TextEncoder().encode(secret);

/** The stored form of a project's signing secret: the key of what is opened from it. */
const storedSigningSecret = (project: ProjectItem) =>
  `${project.projectId}\u0000${project.signingSecretSealed?.secretCiphertext ?? `plain:${project.signingSecret}`}`;

/** A project's signing secret, opened (projects written before sealing hold it in plain). */
export async function signingSecretOf(project: ProjectItem): Promise<string> {
  if (project.signingSecretSealed) return openGeneratedKey(project.signingSecretSealed, signingSecretBinding(project.projectId));
  if (project.signingSecret !== undefined) return project.signingSecret;
  throw new Error(`Project ${project.projectId} has no signing secret`);
}

/**
 * The HMAC key of a project's signing secret, opened and imported once per instance and stored
 * form: the hot path of every request is a map lookup, not a decryption, and jose would otherwise
 * import raw bytes into a WebCrypto key on every call, which costs more than the verification
 * itself. A rotated secret is a new entry; the few a warm instance meets are kept. A secret that
 * does not open is not kept, so a repaired item is tried again.
 */
const verifyKeys = new Map<string, Promise<CryptoKey>>();
function verifyKey(project: ProjectItem): Promise<CryptoKey> {
  const stored = storedSigningSecret(project);
  let key = verifyKeys.get(stored);
  if (!key) {
    if (verifyKeys.size >= 1000) verifyKeys.clear();
    key = signingSecretOf(project).then((secret) =>
      crypto.subtle.importKey('raw', secretBytes(secret), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']),
    );
    key.catch(() => verifyKeys.delete(stored));
    verifyKeys.set(stored, key);
  }
  return key;
}

export interface TokenClaims {
  readonly projectId: string;
  readonly userId: string;
  readonly roles: readonly Role[];
  /** The subject (`sub`); `userId` when absent. */
  readonly sub?: string;
  /** Binds the token to a site origin (guest sessions). */
  readonly origin?: string;
  /** A display name the client chose (guest sessions); informational, the service shows it nowhere. */
  readonly name?: string;
}

/** Signs a user JWT the way a customer's backend may too: HS256 with the project's signing secret. */
export async function signUserToken(
  project: ProjectItem,
  claims: TokenClaims,
  expiresInSeconds: number,
): Promise<{ token: string; expiresAt: string }> {
  const expiresAtSeconds = Math.floor(Date.now() / 1000) + expiresInSeconds;
  const bound = claims.origin === undefined ? {} : { origin: claims.origin };
  const named = claims.name === undefined ? {} : { name: claims.name };
  const token = await new SignJWT({ projectId: claims.projectId, userId: claims.userId, roles: [...claims.roles], ...bound, ...named })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setSubject(claims.sub ?? claims.userId)
    .setIssuedAt()
    .setExpirationTime(expiresAtSeconds)
    .sign(secretBytes(await signingSecretOf(project)));
  return { token, expiresAt: new Date(expiresAtSeconds * 1000).toISOString() };
}

const knownRoles = (value: unknown): Role[] =>
  Array.isArray(value) ? value.filter((role): role is Role => (ROLES as readonly unknown[]).includes(role)) : [];

/** An API key pasted where a user JWT goes (`Authorization: Bearer ck_...`): worth its own hint. */
export const looksLikeApiKey = (credential: string) => credential.startsWith('ck_');

const API_KEY_AS_TOKEN =
  'This is a project API key, not a user JWT: send it in the X-Service-Api-Key header (on the routes that take one), ' +
  'and give users a token from POST /auth/token';

/** Why jose refused a claim, for the 401's message: names only claims, which the caller wrote. */
function claimProblem(error: InstanceType<typeof joseErrors.JWTClaimValidationFailed>): string {
  const claim = `\`${error.claim}\``;
  if (error.reason === 'missing') {
    return error.claim === 'exp'
      ? `The token has no ${claim} claim: every token must expire (exp, in seconds since 1970)`
      : `The token has no ${claim} claim`;
  }
  if (error.reason === 'invalid') return `The token's ${claim} claim must be a number of seconds since 1970`;
  if (error.claim === 'nbf') return `The token is not valid yet (its ${claim} claim is in the future)`;
  if (error.claim === 'iat') return `The token's ${claim} claim is in the future`;
  return `The token's ${claim} claim is not accepted`;
}

/**
 * A guest's user id (`guest_…`) is accepted only in a token shaped as the service mints guest
 * sessions: the `guest` role alone and an origin it is bound to. A member's token naming one is
 * refused like any reserved id, so a customer backend that signs tokens for names its users pick
 * cannot hand one a guest's conversation.
 */
const isGuestShaped = (roles: readonly Role[], origin: string | undefined) =>
  origin !== undefined && roles.length === 1 && roles[0] === 'guest';

/**
 * Verifies a user JWT: the unverified `projectId` claim only selects which secret to try; the
 * signature, the HS256 allow-list and `exp` decide. Tokens without roles are plain members. Each
 * refusal says what to change (a claim missing, the algorithm, the secret), never anything the
 * caller did not send.
 *
 * `requestOrigin` is the request's `Origin` header (HTTP, SSE, the WebSocket upgrade): a token
 * bound to an origin (a guest session) is refused with 403 `origin_not_allowed` when the browser
 * says it runs on another site. A request without `Origin` is no browser's cross-origin request
 * (browsers send it on every one, WebSocket upgrades and EventSource included), and a client that
 * leaves it out could as well write the bound one, so it passes.
 */
export async function authenticateToken(token: string, requestOrigin: string | undefined): Promise<UserPrincipal> {
  if (looksLikeApiKey(token)) throw new UnauthorizedError('invalid_token', API_KEY_AS_TOKEN);
  let projectId: unknown;
  try {
    projectId = decodeJwt(token).projectId;
  } catch {
    throw new UnauthorizedError('invalid_token', 'The token is not a JWT (three base64url parts separated by dots)');
  }
  if (projectId === undefined) throw new UnauthorizedError('invalid_token', 'The token has no `projectId` claim naming its project');
  const project = typeof projectId === 'string' ? await loadProject(projectId) : undefined;
  if (!project) throw new UnauthorizedError('invalid_token', 'The token does not name a known project');
  let key: CryptoKey;
  try {
    key = await verifyKey(project);
  } catch (error) {
    // Moved from another item, tampered with, or under a key the ring no longer holds: no token of
    // this project verifies until an operator acts, which the log tells them.
    logger.error('auth.signing_secret_unopenable', { projectId: project.projectId, error: error as Error });
    throw new UnauthorizedError('invalid_token', 'The token is not valid');
  }
  try {
    const { payload } = await jwtVerify(token, key, { algorithms: ALGORITHMS, requiredClaims: ['exp'] });
    const claimed = typeof payload.userId === 'string' ? payload.userId : payload.sub;
    if (claimed === undefined) throw new UnauthorizedError('invalid_token', 'The token has no `userId` claim (nor `sub`) naming its user');
    const userId = idSchema.safeParse(claimed);
    if (!userId.success) {
      throw new UnauthorizedError('invalid_token', "The token's user id must be 1-128 characters of letters, digits and _ . : @ -");
    }
    const roles = payload.roles === undefined ? (['member'] as Role[]) : knownRoles(payload.roles);
    const origin = typeof payload.origin === 'string' ? payload.origin : undefined;
    // A customer's backend signs its own tokens: one naming an agent's user would speak as the agent.
    const reserved = reservedPrefixOf('user', userId.data);
    if (reserved !== undefined && !(reserved === GUEST_USER_PREFIX && isGuestShaped(roles, origin))) {
      throw new UnauthorizedError('invalid_token', 'The token names a user id the service reserves');
    }
    if (origin !== undefined && requestOrigin !== undefined && requestOrigin !== origin) {
      throw new ForbiddenError(`This token was issued for ${origin} and works from that site only`, 'origin_not_allowed');
    }
    const subject = subjectClaim(payload.sub, userId.data);
    return {
      kind: 'user',
      projectId: project.projectId,
      userId: userId.data,
      roles,
      ...(subject === undefined ? {} : { subject }),
      ...(origin === undefined ? {} : { origin }),
    };
  } catch (error) {
    if (error instanceof joseErrors.JWTExpired) throw new UnauthorizedError('token_expired', 'The token has expired');
    if (error instanceof UnauthorizedError || error instanceof ForbiddenError) throw error;
    if (error instanceof joseErrors.JWTClaimValidationFailed) throw new UnauthorizedError('invalid_token', claimProblem(error));
    if (error instanceof joseErrors.JOSEAlgNotAllowed) throw new UnauthorizedError('invalid_token', 'The token must be signed with HS256');
    if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
      throw new UnauthorizedError(
        'invalid_token',
        "The token's signature does not verify: sign it with HS256, keyed with the project's signingSecret as a UTF-8 string",
      );
    }
    throw new UnauthorizedError('invalid_token', 'The token is not valid');
  }
}

/**
 * The subject a token names beside its user, `undefined` when it names none other. A `sub` that
 * cannot be a user id (customers' own tokens may carry any `sub`) names none: such a token acts for
 * its own user only, as before `sub` meant anything. Whether the caller may act for the subject is
 * the GDPR routes' rule (`functions/domain/privacy/subject.ts`), checked on every use, since a
 * customer's backend signs tokens without `POST /auth/token`.
 */
function subjectClaim(sub: unknown, userId: string): string | undefined {
  if (typeof sub !== 'string' || sub === userId) return undefined;
  const parsed = idSchema.safeParse(sub);
  if (!parsed.success) return undefined;
  // A guest may be the subject an admin acts for (their export, their erasure); no one else the service reserves.
  const reserved = reservedPrefixOf('user', parsed.data);
  if (reserved !== undefined && reserved !== GUEST_USER_PREFIX) return undefined;
  return parsed.data;
}

/** `Authorization: Bearer <JWT>` → the token, or undefined. */
export function bearerToken(authorization: string | undefined): string | undefined {
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  return match?.[1];
}
