import { createHmac, timingSafeEqual } from 'node:crypto';
import { loadProject, signingSecretOf } from '#shared/auth';
import { turnOffDigestEmail } from '#shared/db/digest-preference';
import { ForbiddenError } from '#shared/errors';

/**
 * The digest e-mail's unsubscribe link carries `du1.<project>.<user>.<mac>`: the ids in base64url
 * and an HMAC-SHA256 over them under a key derived from the project's signing secret for this
 * purpose alone. It is no JWT, so no route takes it as a credential, and a user JWT (signed with
 * the secret itself) is no unsubscribe token. It never expires: an e-mail is read late; rotating
 * the project's signing secret voids every link sent before.
 */
const VERSION = 'du1';
export const UNSUBSCRIBE_TOKEN_PATTERN = /^du1\.[A-Za-z0-9_-]{1,200}\.[A-Za-z0-9_-]{1,200}\.[A-Za-z0-9_-]{43}$/;

const linkKey = (signingSecret: string) => createHmac('sha256', signingSecret).update('digest-unsubscribe-link').digest();
const macOf = (key: Buffer, projectId: string, userId: string) =>
  createHmac('sha256', key).update(`${VERSION}\u0000${projectId}\u0000${userId}`).digest();

/** Link keys by project and stored secret: a digest job signs a link per user, and opening the sealed secret each time is the cost. */
const linkKeys = new Map<string, Promise<Buffer>>();

async function keyOf(projectId: string): Promise<Buffer | undefined> {
  const project = await loadProject(projectId);
  if (!project) return undefined;
  const stored = `${projectId}\u0000${project.signingSecretSealed?.secretCiphertext ?? project.signingSecret}`;
  let key = linkKeys.get(stored);
  if (!key) {
    if (linkKeys.size >= 1000) linkKeys.clear();
    key = signingSecretOf(project).then(linkKey);
    key.catch(() => linkKeys.delete(stored));
    linkKeys.set(stored, key);
  }
  return key;
}

/** The token of one user of one project. */
export async function unsubscribeToken(projectId: string, userId: string): Promise<string> {
  const key = await keyOf(projectId);
  if (!key) throw new Error(`No project ${projectId}`);
  const encode = (text: string) => Buffer.from(text, 'utf8').toString('base64url');
  return [VERSION, encode(projectId), encode(userId), macOf(key, projectId, userId).toString('base64url')].join('.');
}

const refused = () =>
  new ForbiddenError('This unsubscribe link is not valid: use the link of a recent digest e-mail', 'invalid_unsubscribe_link');

/** The project and user a token names, once its MAC verifies; 403 `invalid_unsubscribe_link` otherwise. */
export async function verifyUnsubscribeToken(token: string): Promise<{ projectId: string; userId: string }> {
  const [version, project, user, mac] = token.split('.');
  if (version !== VERSION || !project || !user || !mac) throw refused();
  const projectId = Buffer.from(project, 'base64url').toString('utf8');
  const userId = Buffer.from(user, 'base64url').toString('utf8');
  const key = await keyOf(projectId).catch(() => undefined);
  if (!key) throw refused();
  const expected = macOf(key, projectId, userId);
  const given = Buffer.from(mac, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) throw refused();
  return { projectId, userId };
}

/** Follows the link: the digest e-mail of the user it names is off (the other channels keep their settings). */
export async function unsubscribeDigestEmail(token: string): Promise<{ emailEnabled: false }> {
  const { projectId, userId } = await verifyUnsubscribeToken(token);
  await turnOffDigestEmail(projectId, userId, new Date().toISOString());
  return { emailEnabled: false };
}
