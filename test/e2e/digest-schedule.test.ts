import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime';
import { clientOf } from '../support/api';
import { eventually } from '../support/webhook-receiver';

/**
 * The daily digest's schedule on a runtime of this file's own, with DAILY_DIGEST_ENABLED=true and
 * the scheduler's clock started just before 08:00 UTC and running 12 times fast: the entry fires by
 * itself (no trigger) and the digest reaches the SES emulator. The switch off is shown on the
 * shared runtime (`digest.test.ts`).
 */

const OPERATOR_KEY = 'digest-schedule-operator-key-0123456789';
const SPEED = 12;
/**
 * Virtual seconds before 08:00 when the scheduler starts: 20 real seconds for the runtime's start and
 * the setup below, which a loaded machine has been seen to stretch past 10.
 */
const LEAD_SECONDS = 240;

let runtime: LocalRuntime;
let call: ReturnType<typeof clientOf>;
const today = new Date().toISOString().slice(0, 10);

beforeAll(async () => {
  runtime = await startLocalRuntime({
    port: 0,
    env: { CHAT_OPERATOR_KEY: OPERATOR_KEY, DAILY_DIGEST_ENABLED: 'true', AI_BASE_URL: '' },
    scheduleClock: { startAt: Date.parse(`${today}T08:00:00Z`) - LEAD_SECONDS * 1000, speed: SPEED },
  });
  call = clientOf(runtime.baseUrl);
}, 120_000);

afterAll(async () => {
  await runtime?.stop();
}, 60_000);

describe('the DailyDigest schedule', () => {
  it('fires at 08:00 UTC on its own and delivers the digest of that date, while the switch is on', async () => {
    // Arrange
    const created = await call('/platform/projects', { body: { name: 'schedule' }, headers: { 'x-service-operator-key': OPERATOR_KEY } });
    const { apiKey } = created.body;
    const token = async (userId: string) => (await call('/auth/token', { apiKey, body: { userId } })).body.token as string;
    const [reader, talker] = [await token('reader'), await token('talker')];
    await call('/rooms', { token: talker, body: { id: 'standup', type: 'group', name: 'Standup', members: ['reader'] } });
    await call('/messages', { token: talker, body: { roomId: 'standup', content: 'Blocked on review' } });
    await call('/digest/preferences', {
      token: reader,
      method: 'PATCH',
      body: { enabled: true, email: 'reader@example.com', emailEnabled: true },
    });
    expect(runtime.scheduledRuns().DailyDigest ?? 0).toBe(0);

    // Act: nothing but the clock. The run goes through three queued jobs on this file's own, cold
    // DynamoDB Local, beside the other suites; once on a loaded CI machine its e-mail did not show
    // within a minute (cause unknown), so it has longer, and a miss says how far the run got.
    const [email] = await eventually(
      'the scheduled digest e-mail',
      async () => {
        const { emails } = (await (await fetch(`${runtime.sesEndpoint}/store`)).json()) as {
          emails: { destination: { to: string[] }; subject: string; body: { text: string } }[];
        };
        return emails.length > 0 && emails;
      },
      150_000,
      200,
    ).catch((error: Error) => {
      // Which step was missed: the schedule firing, or the run after it.
      const { lambda, metrics } = runtime.stats();
      throw new Error(
        `${error.message}; schedules fired: ${JSON.stringify(runtime.scheduledRuns())}, invocations: ${JSON.stringify(lambda.byFunction)}, metrics: ${JSON.stringify(metrics)}`,
      );
    });

    // Assess
    // The one-minute StatsAlerts schedule fires beside it; the digest ran once.
    expect(runtime.scheduledRuns()).toMatchObject({ DailyDigest: 1 });
    expect(email?.destination.to).toEqual(['reader@example.com']);
    expect(email?.subject).toBe(`Your daily digest for ${today}: 1 new message in 1 room`);
    // AI is off here: counts and the top message, no summary.
    expect(email?.body.text).toContain('# Standup (1 new message)\n- talker: Blocked on review');
    expect(email?.body.text).not.toContain('point one');
  }, 180_000);

  it('runs when triggered while the switch is on, and the trigger names an unknown schedule 404', async () => {
    // Act
    const fired = await call('/_local/schedules/DailyDigest', { method: 'POST' });
    const unknown = await call('/_local/schedules/Nightly', { method: 'POST' });

    // Assess
    expect(fired.body).toEqual({ scheduleId: 'DailyDigest', outcome: { ran: true, digestDate: today } });
    expect(unknown.status).toBe(404);
  });
});
