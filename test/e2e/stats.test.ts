import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { api, clientOf, createTestProject, type TestProject, uniqueId } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';

/** Polls `read` until `done` holds of its answer (the local feed hands figures over every second). */
async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = await read();
  while (!done(last)) {
    if (Date.now() > deadline) throw new Error(`not reached within ${timeoutMs} ms: ${JSON.stringify(last)}`);
    await new Promise((resolve) => setTimeout(resolve, 1000));
    last = await read();
  }
  return last;
}

async function roomWithMessages(call: typeof api, token: string, count: number) {
  const roomId = uniqueId('room');
  expect((await call('/rooms', { token, body: { id: roomId, type: 'group', members: [] } })).status).toBe(201);
  for (let index = 0; index < count; index++) {
    expect((await call('/messages', { token, body: { roomId, content: `figure ${index}` } })).status).toBe(201);
  }
  return roomId;
}

describe('/stats/ops and /stats/slo', () => {
  let project: TestProject;
  let admin: string;
  beforeAll(async () => {
    project = await createTestProject('stats');
    admin = await project.token(uniqueId('admin'), ['admin']);
  });

  it('count the requests, their errors by class and the messages of the project, per minute', async () => {
    // Prepare
    const roomId = await roomWithMessages(api, admin, 3);

    // Act: 1 room + 3 messages + 4 reads (2xx) and 2 unknown rooms (404)
    for (let index = 0; index < 4; index++) expect((await api(`/rooms/${roomId}`, { token: admin })).status).toBe(200);
    for (let index = 0; index < 2; index++) expect((await api(`/rooms/${uniqueId('missing')}`, { token: admin })).status).toBe(404);

    // Assess (the stats reads count too, so only lower bounds hold for requests)
    const ops = await until(
      () => api('/stats/ops?minutes=5', { token: admin }),
      (answer) =>
        answer.body?.totals?.messages === 3 && (answer.body?.totals?.requests_4xx ?? 0) >= 2 && answer.body.totals.requests_total >= 10,
    );
    expect(ops.status).toBe(200);
    expect(ops.body.totals).toMatchObject({ messages: 3, requests_4xx: 2 });
    expect(ops.body.totals.requests_5xx ?? 0).toBe(0);
    expect(ops.body.series.length).toBeGreaterThanOrEqual(1);
    expect(ops.body.series[0].minute).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:00\.000Z$/);
    const slo = await api('/stats/slo?minutes=5', { token: admin });
    expect(slo.status).toBe(200);
    expect(slo.body).toMatchObject({ requests_error: 0, requests_4xx: 2, availability: 1 });
    expect(slo.body.requests_total).toBeGreaterThanOrEqual(10);
    expect(slo.body.latency_p95_ms).toBeGreaterThan(0);
    // No 5xx: all 70 availability points; the latency points fall only if a loaded machine pushed p95 past 500 ms.
    const p95 = slo.body.latency_p95_ms as number;
    expect(slo.body.score).toBeCloseTo(70 + (p95 <= 500 ? 30 : (30 * 500) / p95), 1);
  });

  it('show another project none of these figures', async () => {
    // Prepare
    const other = await createTestProject('stats-other');
    const otherAdmin = await other.token(uniqueId('admin'), ['admin']);
    await roomWithMessages(api, admin, 1);

    // Act
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const ops = await api('/stats/ops?minutes=60', { token: otherAdmin });

    // Assess: only its own read of a moment ago, if the feed has handed it over
    expect(ops.status).toBe(200);
    expect(ops.body.totals.messages ?? 0).toBe(0);
    expect(ops.body.totals.requests_total ?? 0).toBeLessThanOrEqual(1);
  });

  it("judge the score by the project's own objectives once an admin sets them, the settings' until then", async () => {
    // Prepare
    const other = await createTestProject('stats-objectives');
    const otherAdmin = await other.token(uniqueId('admin'), ['admin']);
    const before = await api('/admin/stats/objectives', { token: otherAdmin });

    // Act
    const set = await api('/admin/stats/objectives', {
      token: otherAdmin,
      method: 'PUT',
      body: { availability: 0.95, latencyP95Ms: 250 },
    });
    const slo = await api('/stats/slo?minutes=5', { token: otherAdmin });

    // Assess
    expect(before.body).toEqual({
      objectives: { availability: 0.999, latencyP95Ms: 500 },
      source: 'settings',
      updatedAt: null,
      updatedBy: null,
    });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ objectives: { availability: 0.95, latencyP95Ms: 250 }, source: 'project' });
    expect(slo.body.objectives).toEqual({ availability: 0.95, latencyP95Ms: 250 });
  });

  it('answer 400 for minutes outside 1–1440 or not whole', async () => {
    const admin = await project.token(uniqueId('admin'), ['admin']);
    for (const minutes of ['0', '1441', '1.5', 'abc', '-3']) {
      const answer = await api(`/stats/ops?minutes=${minutes}`, { token: admin });
      expect(answer.status, minutes).toBe(400);
    }
    expect((await api('/stats/slo?minutes=1440', { token: admin })).status).toBe(200);
  });
});

describe('injected errors', () => {
  let local: LocalProcess;
  beforeAll(async () => {
    // A provider URL nothing listens on: the AI routes answer 502 on demand, with no mock.
    local = await startLocalProcess({
      args: ['--in-memory'],
      env: {
        AI_BASE_URL: 'http://127.0.0.1:9',
        STATS_AVAILABILITY_OBJECTIVE: '0.9',
        STATS_ALERT_BURN_RATE: '2',
        STATS_ALERT_MIN_REQUESTS: '5',
        RATE_LIMIT_REPLY_SUGGESTIONS_PER_MINUTE: '1000',
        RATE_LIMIT_STATS_READS_PER_MINUTE: '1000',
      },
    });
  }, 90_000);
  afterAll(async () => {
    await local?.stop();
  });

  it('move the score, raise the burn alert, and the alert resolves once the errors are diluted', async () => {
    // Prepare
    const call = clientOf(local.baseUrl);
    const issued = await call('/auth/token', { apiKey: local.apiKey, body: { userId: uniqueId('admin'), roles: ['admin'] } });
    const token = issued.body.token as string;
    const roomId = await roomWithMessages(call, token, 1);

    // Act: 5 × 502, then the alert
    for (let index = 0; index < 5; index++) {
      expect((await call('/messages/suggest-replies', { token, body: { roomId } })).status).toBe(502);
    }
    const fired = await until(
      () => call('/stats/alerts', { token }),
      (answer) => (answer.body?.alerts ?? []).some((alert: { rule: string }) => alert.rule === 'error_budget_burn'),
    );
    const scored = await until(
      () => call('/stats/slo?minutes=5', { token }),
      (answer) => answer.body?.requests_error === 5,
    );
    // 40 successful reads dilute 5 errors below 20 %
    for (let index = 0; index < 40; index++) expect((await call(`/rooms/${roomId}`, { token })).status).toBe(200);
    const resolved = await until(
      () => call('/stats/alerts', { token }),
      (answer) =>
        (answer.body?.alerts ?? []).some(
          (alert: { rule: string; resolvedAt: string | null }) => alert.rule === 'error_budget_burn' && alert.resolvedAt,
        ),
    );

    // Assess
    expect(scored.body.requests_error).toBe(5);
    expect(scored.body.score).toBeLessThan(100);
    const burn = fired.body.alerts.find((alert: { rule: string }) => alert.rule === 'error_budget_burn');
    expect(burn).toMatchObject({ resolvedAt: null, threshold: 2 });
    expect(Date.parse(burn.firedAt)).not.toBeNaN();
    const after = resolved.body.alerts.find((alert: { rule: string }) => alert.rule === 'error_budget_burn');
    expect(Date.parse(after.resolvedAt)).toBeGreaterThanOrEqual(Date.parse(after.firedAt));
    expect(resolved.body.alerts.some((alert: { rule: string }) => alert.rule === 'ai_provider_errors')).toBe(true);
  }, 120_000);
});
