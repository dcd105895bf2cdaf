import { randomBytes, scryptSync } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { findUserCredentials, putUserCredentials, userCredentialsKey } from '#shared/db/user-credentials';
import { api, createTestProject, runtime, type TestProject, uniqueId } from '../support/api';
import { freshSourceIp, postFrom, type SourcedAnswer } from '../support/source-ip';

/**
 * `POST /auth/signin` under attack: the per-IP limit, the growing lockout of a (project, user id),
 * and the replacement of hashes stored with older scrypt parameters. The shared runtime runs with a
 * lockout threshold of 3 and locks of 1 s growing to at most 2 s (`test/support/global-setup.ts`).
 * Requests leave from loopback addresses of their own (all of 127/8 is loopback), so the per-IP
 * budgets spent here are nobody else's.
 */

type Answer = SourcedAnswer;

/** `POST /auth/signin` from `sourceIp`. */
const signInFrom = (sourceIp: string, body: unknown): Promise<Answer> => postFrom(sourceIp, '/auth/signin', body);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let project: TestProject;
beforeAll(async () => {
  project = await createTestProject('sign-in-throttle');
});

async function userWithPassword(password: string): Promise<string> {
  const userId = uniqueId('user');
  const set = await api(`/users/${userId}/credentials`, { method: 'PUT', apiKey: project.apiKey, body: { password } });
  if (set.status !== 204) throw new Error(`credentials failed: ${set.status} ${JSON.stringify(set.body)}`);
  return userId;
}

describe('the lockout of a (project, user id)', () => {
  it('locks after 3 failures, doubles the lock with each further failure up to the cap, and a success resets it', async () => {
    // Prepare
    const userId = await userWithPassword('the-right-password');
    const ip = freshSourceIp();
    const attempt = (password: string) => signInFrom(ip, { projectId: project.projectId, userId, password });

    // Act: three failures, then one more after each lock ends
    const failures = await Promise.all([attempt('wrong-1'), attempt('wrong-2'), attempt('wrong-3')]);
    const locks: Answer[] = [await attempt('the-right-password')];
    await sleep(1100);
    failures.push(await attempt('wrong-4'));
    locks.push(await attempt('wrong-5'));
    await sleep(2100);
    failures.push(await attempt('wrong-6'));
    locks.push(await attempt('wrong-7'));
    await sleep(2100);
    const success = await attempt('the-right-password');
    const afterSuccess = [await attempt('wrong-8'), await attempt('wrong-9')];

    // Assess
    expect(failures.map((answer) => answer.status)).toEqual([401, 401, 401, 401, 401]);
    for (const lock of locks) {
      expect(lock).toMatchObject({ status: 429, body: { error: { code: 'sign_in_locked', message: expect.any(String) } } });
    }
    expect(locks.map((lock) => lock.retryAfter)).toEqual(['1', '2', '2']);
    expect(success.status).toBe(200);
    expect(afterSuccess.map((answer) => answer.status)).toEqual([401, 401]);
  }, 60_000);

  it('locks a user id that does not exist the same way, so a lock tells nothing about who exists', async () => {
    // Prepare
    const userId = uniqueId('nobody');
    const ip = freshSourceIp();
    const attempt = () => signInFrom(ip, { projectId: project.projectId, userId, password: 'guess' });

    // Act
    const failures = await Promise.all([attempt(), attempt(), attempt()]);
    const locked = await attempt();

    // Assess
    expect(failures.map((answer) => answer.status)).toEqual([401, 401, 401]);
    expect(locked).toMatchObject({ status: 429, retryAfter: '1', body: { error: { code: 'sign_in_locked' } } });
  }, 60_000);
});

describe('the per-IP limit', () => {
  it('refuses an address past its budget with 429 rate_limited and Retry-After, whatever the user, while other addresses go on', async () => {
    // Prepare: the budget spent by requests that fail validation (they count, or they would be free)
    const limit = Number(runtime().env.RATE_LIMIT_SIGNIN_PER_IP_PER_MINUTE);
    const userId = await userWithPassword('per-ip-password');
    const ip = freshSourceIp();
    for (let sent = 0; sent < limit; sent += 25) {
      await Promise.all(Array.from({ length: Math.min(25, limit - sent) }, () => signInFrom(ip, {})));
    }

    // Act
    const refused = await signInFrom(ip, { projectId: project.projectId, userId, password: 'per-ip-password' });
    const otherAddress = await signInFrom(freshSourceIp(), { projectId: project.projectId, userId, password: 'per-ip-password' });

    // Assess
    expect(refused).toMatchObject({ status: 429, body: { error: { code: 'rate_limited' } } });
    expect(Number(refused.retryAfter)).toBeGreaterThanOrEqual(1);
    expect(otherAddress.status).toBe(200);
  }, 60_000);
});

describe('hashes stored with older scrypt parameters', () => {
  it('are replaced by a hash with N = 2^17 on the next successful sign-in, which keeps working', async () => {
    // Prepare: credentials as an earlier release stored them (N = 2^15)
    const userId = uniqueId('legacy');
    const salt = randomBytes(16);
    const oldKey = scryptSync('legacy-password', salt, 64, { N: 2 ** 15, r: 8, p: 1, maxmem: 64 * 1024 * 1024 });
    const oldHash = ['scrypt', 2 ** 15, 8, 1, salt.toString('base64url'), oldKey.toString('base64url')].join('$');
    await putUserCredentials({
      ...userCredentialsKey(project.projectId, userId),
      projectId: project.projectId,
      userId,
      passwordHash: oldHash,
      roles: ['member'],
      updatedAt: new Date().toISOString(),
    });
    const body = { projectId: project.projectId, userId, password: 'legacy-password' };

    // Act
    const first = await signInFrom(freshSourceIp(), body);
    const stored = await findUserCredentials(project.projectId, userId);
    const second = await signInFrom(freshSourceIp(), body);
    const wrong = await signInFrom(freshSourceIp(), { ...body, password: 'not-the-legacy-password' });

    // Assess
    expect(first.status).toBe(200);
    expect(stored?.passwordHash).not.toBe(oldHash);
    expect(stored?.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$[\w-]{22}\$[\w-]{86}$/);
    expect(second.status).toBe(200);
    expect(wrong.status).toBe(401);
  }, 60_000);
});
