import { describe, expect, it } from 'vitest';
import { setUserCredentials, signIn } from '#domain/auth/sessions';
import { createProject } from '#domain/projects/projects';
import { uniqueId } from '../support/api';
import { get } from '../support/raw-table';

/**
 * What a failed sign-in costs, measured as the CPU time of this process (scrypt runs on its thread
 * pool, which `process.cpuUsage` counts): CPU time is the work done, so a loaded machine slows the
 * calls but does not change the comparison, as wall time would.
 */

async function cpuMsOf(call: () => Promise<unknown>): Promise<number> {
  const before = process.cpuUsage();
  await call().catch(() => undefined);
  const spent = process.cpuUsage(before);
  return (spent.user + spent.system) / 1000;
}

describe('a failed sign-in', () => {
  it('costs an unknown user and an unknown project a scrypt derivation, as a known user with a wrong password', async () => {
    // Prepare
    const { projectId } = await createProject({ name: 'sign-in-cost', projectId: uniqueId('cost').toLowerCase() });
    const knownUsers = [uniqueId('known'), uniqueId('known')];
    for (const userId of knownUsers) await setUserCredentials(projectId, { userId, password: 'the-right-password' });
    await signIn({ projectId, userId: uniqueId('warm-up'), password: 'x' }).catch(() => undefined);

    // Act: interleaved, so that whatever else the process does falls on every variant alike
    const spent = { known: 0, unknownUser: 0, unknownProject: 0 };
    for (const userId of knownUsers) {
      spent.known += await cpuMsOf(() => signIn({ projectId, userId, password: 'a-wrong-password' }));
      spent.unknownUser += await cpuMsOf(() => signIn({ projectId, userId: uniqueId('nobody'), password: 'a-wrong-password' }));
      spent.unknownProject += await cpuMsOf(() =>
        signIn({ projectId: uniqueId('no-project').toLowerCase(), userId, password: 'a-wrong-password' }),
      );
    }

    // Assess: without the stand-in derivation the unknown paths cost a few DynamoDB calls, about 2 % of the known one
    expect(spent.unknownUser, JSON.stringify(spent)).toBeGreaterThan(0.5 * spent.known);
    expect(spent.unknownProject, JSON.stringify(spent)).toBeGreaterThan(0.5 * spent.known);
  }, 60_000);

  it('stores new passwords with scrypt N = 2^17, r = 8, p = 1', async () => {
    // Prepare
    const { projectId } = await createProject({ name: 'sign-in-cost', projectId: uniqueId('cost').toLowerCase() });

    // Act
    await setUserCredentials(projectId, { userId: 'dora', password: 'dora-password' });

    // Assess
    expect((await get(`P#${projectId}#U#dora`, 'CREDENTIALS'))?.passwordHash).toMatch(/^scrypt\$131072\$8\$1\$/);
  }, 30_000);
});
