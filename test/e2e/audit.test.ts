import { createHmac } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../lib/local/runtime';
import { api, clientOf, createTestProject, type TestProject, uniqueId } from '../support/api';
import { MARKETPLACE_AUDIT_SECRET } from '../support/global-setup';

/**
 * The audit log's reading side (`GET /admin/audit/events`: newest first, an opaque cursor, its
 * bounds) and the marketplace callback (`POST /internal/marketplace/audit-result`): its signature,
 * computed here with node:crypto, its window and replays, and 503 on a runtime without the secret.
 */

const auditEvents = async (project: TestProject, query = '') => api(`/admin/audit/events${query}`, { apiKey: project.apiKey });

/** `X-Service-Signature` as the marketplace computes it. */
const signatureOf = (t: number | string, text: string, secret = MARKETPLACE_AUDIT_SECRET) =>
  `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${text}`).digest('hex')}`;
const nowSeconds = () => Math.floor(Date.now() / 1000);

const postResult = (text: string, signature: string | undefined, base = api) =>
  base('/internal/marketplace/audit-result', {
    rawBody: text,
    headers: { 'content-type': 'application/json', ...(signature === undefined ? {} : { 'x-service-signature': signature }) },
  });

describe('GET /admin/audit/events', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createTestProject('audit-list');
    // Five flag changes, five events, after the project's own creation event.
    for (let i = 0; i < 5; i++) {
      const set = await api('/admin/feature-flags', {
        method: 'PUT',
        apiKey: project.apiKey,
        headers: { 'x-trace-id': `audit-list-${i}` },
        body: { overrides: { voice_messages: i % 2 === 0 } },
      });
      expect(set.status).toBe(200);
    }
  });

  it('pages newest first with an opaque cursor until none is left', async () => {
    // Act
    const pages = [];
    let cursor: string | null = '';
    while (cursor !== null) {
      const page = await auditEvents(project, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      pages.push(page.body.events);
      cursor = page.body.nextCursor;
    }

    // Assess
    const flagEvents = pages.flat().filter((event) => event.action === 'flags.set');
    expect(flagEvents.map((event) => event.traceId)).toEqual([
      'audit-list-4',
      'audit-list-3',
      'audit-list-2',
      'audit-list-1',
      'audit-list-0',
    ]);
    const times = pages.flat().map((event) => event.at);
    expect(times).toEqual([...times].sort().reverse());
    expect(pages.flat().map((event) => event.id)).toHaveLength(new Set(pages.flat().map((event) => event.id)).size);
    expect(pages.slice(0, -1).every((page) => page.length === 2)).toBe(true);
  });

  it('defaults to 50 events a page', async () => {
    // Act
    const page = await auditEvents(project);

    // Assess
    expect(page.status).toBe(200);
    expect(page.body.events.length).toBeGreaterThanOrEqual(5);
    expect(page.body.nextCursor).toBeNull();
  });

  it.each([
    ['limit=0', 'query.limit'],
    ['limit=101', 'query.limit'],
    ['limit=ten', 'query.limit'],
    [`cursor=${Buffer.from('P#other#AUDIT').toString('base64url')}`, 'query.cursor'],
    ['cursor=!!!', 'query.cursor'],
    ['bogus=1', 'query'],
  ])('answers 400 to %s', async (query, field) => {
    // Act
    const response = await auditEvents(project, `?${query}`);

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(JSON.stringify(response.body.error.details)).toContain(field);
  });

  it('shows a project its own events only, and a member none', async () => {
    // Prepare
    const other = await createTestProject('audit-list-other');
    const member = await project.token(uniqueId('member'));

    // Act
    const [otherPage, asMember] = [await auditEvents(other), await api('/admin/audit/events', { token: member })];

    // Assess
    expect(otherPage.body.events.filter((event: { action: string }) => event.action === 'flags.set')).toEqual([]);
    expect(asMember.status).toBe(403);
  });
});

describe('POST /internal/marketplace/audit-result', () => {
  let project: TestProject;
  beforeAll(async () => {
    project = await createTestProject('audit-marketplace');
  });

  const resultBody = (overrides: Record<string, unknown> = {}) =>
    JSON.stringify({
      projectId: project.projectId,
      subject: { kind: 'agent', id: uniqueId('agt') },
      result: 'failed',
      findings: [{ code: 'prompt_injection', severity: 'high', message: 'Follows instructions found in user content' }],
      auditedAt: new Date().toISOString(),
      ...overrides,
    });
  const marketplaceEvents = async () =>
    (await auditEvents(project, '?limit=100')).body.events.filter(
      (event: { action: string }) => event.action === 'marketplace.audit_result',
    );

  it('stores a signed result with one audit event by the marketplace, and a replay adds nothing', async () => {
    // Prepare
    const text = resultBody();
    const signature = signatureOf(nowSeconds(), text);
    const before = await marketplaceEvents();

    // Act
    const first = await postResult(text, signature);
    const replay = await postResult(text, signature);

    // Assess
    expect({ status: first.status, body: first.body }).toEqual({ status: 201, body: { stored: true } });
    expect({ status: replay.status, body: replay.body }).toEqual({ status: 200, body: { stored: false } });
    const added = (await marketplaceEvents()).slice(0, (await marketplaceEvents()).length - before.length);
    const sent = JSON.parse(text);
    expect(added).toEqual([
      expect.objectContaining({
        action: 'marketplace.audit_result',
        actor: { kind: 'marketplace' },
        outcome: 'succeeded',
        target: { subjectKind: 'agent', subjectId: sent.subject.id, result: 'failed', findings: 1, auditedAt: sent.auditedAt },
      }),
    ]);
    expect(JSON.stringify(added)).not.toContain(MARKETPLACE_AUDIT_SECRET);
  });

  it.each([
    ['a wrong secret', (text: string) => signatureOf(nowSeconds(), text, 'another-secret-of-the-same-kind-0123456789')],
    ['no header', () => undefined],
    ['a malformed header', () => 'v1=abc'],
    ['no t=', (text: string) => signatureOf(nowSeconds(), text).replace(/^t=\d+,/, '')],
    ['a stale t (6 minutes old)', (text: string) => signatureOf(nowSeconds() - 360, text)],
    ['a t from the future (6 minutes ahead)', (text: string) => signatureOf(nowSeconds() + 360, text)],
    ['another body', (text: string) => signatureOf(nowSeconds(), text.replace('failed', 'passed'))],
    ['an old t replayed with its genuine signature', (text: string) => signatureOf(nowSeconds() - 301, text)],
  ])('refuses %s with 401 and stores nothing', async (_label, sign) => {
    // Prepare
    const text = resultBody();
    const before = (await marketplaceEvents()).length;

    // Act
    const response = await postResult(text, sign(text));

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 401, code: 'invalid_service_signature' });
    expect(await marketplaceEvents()).toHaveLength(before);
  });

  it.each([
    ['an unknown result', { result: 'maybe' }, 'body.result'],
    ['an unknown subject kind', { subject: { kind: 'room', id: 'x' } }, 'body.subject.kind'],
    ['auditedAt not a time', { auditedAt: 'yesterday' }, 'body.auditedAt'],
    ['an extra field', { secretNote: 'x' }, 'body'],
  ])('answers 400 to a signed body with %s', async (_label, change, field) => {
    // Prepare
    const text = resultBody(change);

    // Act
    const response = await postResult(text, signatureOf(nowSeconds(), text));

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(JSON.stringify(response.body.error.details)).toContain(field);
  });

  it('answers 404 for a project that does not exist', async () => {
    // Prepare
    const text = resultBody({ projectId: 'no-such-project-anywhere' });

    // Act
    const response = await postResult(text, signatureOf(nowSeconds(), text));

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 404, code: 'project_not_found' });
  });

  it('keeps the later verdict when an earlier one arrives late', async () => {
    // Prepare
    const subject = { kind: 'bridge', id: uniqueId('br') };
    const later = resultBody({ subject, result: 'passed', auditedAt: '2030-01-02T00:00:00.000Z' });
    const earlier = resultBody({ subject, result: 'failed', auditedAt: '2030-01-01T00:00:00.000Z' });

    // Act
    const first = await postResult(later, signatureOf(nowSeconds(), later));
    const late = await postResult(earlier, signatureOf(nowSeconds(), earlier));

    // Assess
    expect([first.status, late.status]).toEqual([201, 200]);
    const events = (await marketplaceEvents()).filter((event: { target: { subjectId: string } }) => event.target.subjectId === subject.id);
    expect(events.map((event: { target: { result: string } }) => event.target.result)).toEqual(['passed']);
  });
});

describe('POST /internal/marketplace/audit-result without the secret (a runtime of its own)', () => {
  let own: LocalRuntime;
  beforeAll(async () => {
    // The shared runtime's settings reach this worker's environment (test/support/runtime-env.ts).
    delete process.env.MARKETPLACE_AUDIT_SECRET;
    own = await startLocalRuntime({ port: 0, consumers: false, env: {} });
  }, 120_000);
  afterAll(async () => {
    await own?.stop();
  }, 60_000);

  it('answers 503 marketplace_not_configured, signed or not', async () => {
    // Prepare
    const text = JSON.stringify({ projectId: 'any-project' });

    // Act
    const [signed, unsigned] = [
      await postResult(text, signatureOf(nowSeconds(), text), clientOf(own.baseUrl)),
      await postResult(text, undefined, clientOf(own.baseUrl)),
    ];

    // Assess
    expect({ status: signed.status, code: signed.body?.error?.code }).toEqual({ status: 503, code: 'marketplace_not_configured' });
    expect({ status: unsigned.status, code: unsigned.body?.error?.code }).toEqual({ status: 503, code: 'marketplace_not_configured' });
  });
});
