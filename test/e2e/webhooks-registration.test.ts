import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ApiOptions, api, clientOf, createTestProject, ISO_TIMESTAMP, type TestProject, uniqueId } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';

/**
 * Webhook registration: the catalogue, validation of every field, the secret shown once, deletion,
 * roles and tenant isolation on the shared runtime (no delivery needed), and the SSRF rule of the
 * AWS setting on a runtime of its own started with `WEBHOOK_ALLOW_PRIVATE_TARGETS=false`.
 */

/** The spec's event table, plus the types it references elsewhere. */
const SPEC_EVENT_TYPES = [
  'message.created',
  'mention',
  'report.created',
  'moderation.auto_flag',
  'room.occupied',
  'room.vacated',
  'member_joined',
  'member_left',
  'subscription_count',
  'client_event',
  'cache_miss',
  'user.event',
];
/** The spec's "inbox events" are `notification.created` and `notification.read`. */
const ALSO_REFERENCED = ['room.summary', 'room.member_joined', 'message.updated', 'handoff', 'notification.created', 'notification.read'];
/** Types the service adds: the end of a membership, announced as its start is. */
const OWN_TYPES = ['room.member_left'];

const URL_OK = 'https://hooks.example.com/chat';

const registerAs = (auth: Pick<ApiOptions, 'token' | 'apiKey'>, body: unknown) => api('/webhooks/register', { ...auth, body });
const listOf = async (project: TestProject) => (await api('/webhooks', { apiKey: project.apiKey })).body.webhooks as { id: string }[];

describe('GET /webhooks/event-types', () => {
  it('answers without credentials with the spec catalogue and the types it references', async () => {
    // Act
    const listed = await api('/webhooks/event-types');

    // Assess
    expect(listed.status).toBe(200);
    expect([...listed.body.events].sort()).toEqual([...SPEC_EVENT_TYPES, ...ALSO_REFERENCED, ...OWN_TYPES].sort());
  });
});

describe.each([
  { caller: 'the project API key', auth: async (project: TestProject) => ({ apiKey: project.apiKey }), createdBy: 'service' },
  {
    caller: 'an admin JWT',
    auth: async (project: TestProject) => ({ token: await project.token('the-admin', ['admin']) }),
    createdBy: 'the-admin',
  },
  {
    caller: 'an owner JWT',
    auth: async (project: TestProject) => ({ token: await project.token('the-owner', ['owner']) }),
    createdBy: 'the-owner',
  },
])('POST /webhooks/register by $caller', ({ auth, createdBy }) => {
  it('answers 201 with the registration and its secret, which GET /webhooks never shows', async () => {
    // Prepare
    const project = await createTestProject('webhooks');
    const secret = `my-own-secret-${uniqueId('s')}`;

    // Act
    const registered = await registerAs(await auth(project), { url: URL_OK, eventTypes: ['message.created', 'mention'], secret });
    const listed = await api('/webhooks', await auth(project));

    // Assess
    expect(registered.status).toBe(201);
    expect(registered.body).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: URL_OK,
      eventTypes: ['message.created', 'mention'],
      secret,
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
      createdBy,
    });
    expect(listed.status).toBe(200);
    expect(listed.body.webhooks).toEqual([
      { id: registered.body.id, url: URL_OK, eventTypes: ['message.created', 'mention'], createdAt: registered.body.createdAt, createdBy },
    ]);
    expect(JSON.stringify(listed.body)).not.toContain(secret);
  });
});

describe('POST /webhooks/register without a secret', () => {
  it('generates a 32-byte hex secret, shown once', async () => {
    // Prepare
    const project = await createTestProject('webhooks');

    // Act
    const registered = await registerAs({ apiKey: project.apiKey }, { url: URL_OK, eventTypes: ['mention'] });
    const listed = await api('/webhooks', { apiKey: project.apiKey });

    // Assess
    expect(registered.status).toBe(201);
    expect(registered.body.secret).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(listed.body)).not.toContain(registered.body.secret);
    expect(listed.body.webhooks).toHaveLength(1);
  });
});

describe('POST /webhooks/register with unknown event types', () => {
  it('answers 400 naming each unknown type (and not the known one), and stores nothing', async () => {
    // Prepare
    const project = await createTestProject('webhooks');

    // Act
    const refused = await registerAs(
      { apiKey: project.apiKey },
      { url: URL_OK, eventTypes: ['message.created', 'message.exploded', 'room.teleported'] },
    );

    // Assess
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('unknown_event_type');
    expect(refused.body.error.message).toContain('message.exploded');
    expect(refused.body.error.message).toContain('room.teleported');
    expect(refused.body.error.message).not.toContain('message.created');
    expect(await listOf(project)).toEqual([]);
  });

  it('suggests the type meant for a near miss (message.create → message.created)', async () => {
    // Prepare
    const project = await createTestProject('webhooks');

    // Act
    const refused = await registerAs({ apiKey: project.apiKey }, { url: URL_OK, eventTypes: ['message.create', 'room.teleported'] });

    // Assess
    expect(refused).toMatchObject({
      status: 400,
      body: {
        error: {
          code: 'unknown_event_type',
          details: [
            {
              field: 'body.eventTypes',
              message: 'unknown event types `message.create` (did you mean `message.created`?), `room.teleported`',
            },
          ],
        },
      },
    });
  });
});

describe.each([
  {
    case: 'an http URL to a public host',
    body: { url: 'http://hooks.example.com/chat', eventTypes: ['mention'] },
    code: 'webhook_url_not_https',
  },
  {
    case: 'a URL of another scheme',
    body: { url: 'ftp://hooks.example.com/chat', eventTypes: ['mention'] },
    code: 'webhook_url_not_https',
  },
  { case: 'a URL that does not parse', body: { url: 'not a url', eventTypes: ['mention'] }, code: 'validation_failed' },
  { case: 'a URL holding NUL', body: { url: 'https://hooks.example.com/a\u0000b', eventTypes: ['mention'] }, code: 'validation_failed' },
  {
    case: 'a URL holding a lone surrogate',
    body: { url: 'https://hooks.example.com/a\udc00b', eventTypes: ['mention'] },
    code: 'validation_failed',
  },
  { case: 'a URL holding a tab', body: { url: 'https://hooks.example.com/a\tb', eventTypes: ['mention'] }, code: 'validation_failed' },
  {
    case: 'a URL with credentials',
    body: { url: 'https://user:pass@hooks.example.com/chat', eventTypes: ['mention'] },
    code: 'validation_failed',
  },
  { case: 'an empty eventTypes', body: { url: URL_OK, eventTypes: [] }, code: 'validation_failed' },
  { case: 'a missing url', body: { eventTypes: ['mention'] }, code: 'validation_failed' },
  { case: 'missing eventTypes', body: { url: URL_OK }, code: 'validation_failed' },
  { case: 'an empty body object', body: {}, code: 'validation_failed' },
  { case: 'a url that is a number', body: { url: 42, eventTypes: ['mention'] }, code: 'validation_failed' },
  { case: 'eventTypes as a string', body: { url: URL_OK, eventTypes: 'mention' }, code: 'validation_failed' },
  { case: 'eventTypes holding a number', body: { url: URL_OK, eventTypes: [1] }, code: 'validation_failed' },
  {
    case: 'a secret that is a number',
    body: { url: URL_OK, eventTypes: ['mention'], secret: 1234567890123456 },
    code: 'validation_failed',
  },
  {
    case: 'a secret shorter than 16 characters',
    body: { url: URL_OK, eventTypes: ['mention'], secret: 'short' },
    code: 'validation_failed',
  },
  { case: 'an unknown body field', body: { url: URL_OK, eventTypes: ['mention'], active: true }, code: 'validation_failed' },
  { case: 'a body that is an array', body: [URL_OK], code: 'validation_failed' },
])('POST /webhooks/register with $case', ({ body, code }) => {
  it(`answers 400 ${code} and stores nothing`, async () => {
    // Prepare
    const project = await createTestProject('webhooks');

    // Act
    const refused = await registerAs({ apiKey: project.apiKey }, body);

    // Assess
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe(code);
    expect(await listOf(project)).toEqual([]);
  });
});

describe('POST /webhooks/register with malformed JSON', () => {
  it('answers 400 and stores nothing', async () => {
    // Prepare
    const project = await createTestProject('webhooks');

    // Act
    const refused = await api('/webhooks/register', {
      apiKey: project.apiKey,
      rawBody: '{"url": "https://hooks.example.com", "eventTypes": [',
      headers: { 'content-type': 'application/json' },
    });

    // Assess
    expect(refused.status).toBe(400);
    expect(await listOf(project)).toEqual([]);
  });
});

describe.each(['member', 'moderator', 'guest'])('a %s JWT', (role) => {
  let project: TestProject;
  let webhookId: string;
  let token: string;

  beforeAll(async () => {
    project = await createTestProject('webhooks');
    webhookId = (await registerAs({ apiKey: project.apiKey }, { url: URL_OK, eventTypes: ['mention'] })).body.id;
    token = await project.token(uniqueId(role), [role]);
  });

  it.each([
    { action: 'register', request: () => registerAs({ token }, { url: URL_OK, eventTypes: ['mention'] }) },
    { action: 'list', request: () => api('/webhooks', { token }) },
    { action: 'delete', request: () => api(`/webhooks/${webhookId}`, { method: 'DELETE', token }) },
  ])('may not $action webhooks (403), and the registrations stay as they were', async ({ request }) => {
    // Act
    const refused = await request();

    // Assess
    expect(refused.status).toBe(403);
    expect((await listOf(project)).map((webhook) => webhook.id)).toEqual([webhookId]);
  });
});

describe('webhook routes without credentials', () => {
  it.each([
    { action: 'register', path: '/webhooks/register', method: 'POST' },
    { action: 'list', path: '/webhooks', method: 'GET' },
    { action: 'delete', path: '/webhooks/wh_any_0123456789abcdef', method: 'DELETE' },
  ])('answer 401 to $action', async ({ path, method }) => {
    // Act
    const refused = await api(path, { method, ...(method === 'POST' ? { body: { url: URL_OK, eventTypes: ['mention'] } } : {}) });

    // Assess
    expect(refused.status).toBe(401);
  });
});

describe('DELETE /webhooks/{webhookId}', () => {
  it('removes the registration (204), and a second delete answers 404', async () => {
    // Prepare
    const project = await createTestProject('webhooks');
    const kept = await registerAs({ apiKey: project.apiKey }, { url: `${URL_OK}/kept`, eventTypes: ['mention'] });
    const removed = await registerAs({ apiKey: project.apiKey }, { url: `${URL_OK}/removed`, eventTypes: ['mention'] });

    // Act
    const deleted = await api(`/webhooks/${removed.body.id}`, { method: 'DELETE', apiKey: project.apiKey });
    const again = await api(`/webhooks/${removed.body.id}`, { method: 'DELETE', apiKey: project.apiKey });

    // Assess
    expect(deleted.status).toBe(204);
    expect(again.status).toBe(404);
    expect(again.body.error.code).toBe('webhook_not_found');
    expect((await listOf(project)).map((webhook) => webhook.id)).toEqual([kept.body.id]);
  });
});

describe('tenant isolation', () => {
  let a: TestProject;
  let b: TestProject;
  let aWebhookId: string;

  beforeAll(async () => {
    [a, b] = await Promise.all([createTestProject('webhooks-a'), createTestProject('webhooks-b')]);
    aWebhookId = (await registerAs({ apiKey: a.apiKey }, { url: URL_OK, eventTypes: ['mention'] })).body.id;
  });

  it("project B does not see A's webhooks", async () => {
    // Act
    const listed = await api('/webhooks', { token: await b.token(uniqueId('admin'), ['admin']) });

    // Assess
    expect(listed.status).toBe(200);
    expect(listed.body.webhooks).toEqual([]);
  });

  it.each([
    { caller: 'API key', auth: async () => ({ apiKey: b.apiKey }) },
    { caller: 'admin JWT', auth: async () => ({ token: await b.token(uniqueId('admin'), ['admin']) }) },
  ])("project B's $caller cannot delete A's webhook: 404, and A keeps it", async ({ auth }) => {
    // Act
    const refused = await api(`/webhooks/${aWebhookId}`, { method: 'DELETE', ...(await auth()) });

    // Assess
    expect(refused.status).toBe(404);
    expect((await listOf(a)).map((webhook) => webhook.id)).toEqual([aWebhookId]);
  });
});

describe('registration on the AWS setting (WEBHOOK_ALLOW_PRIVATE_TARGETS=false)', () => {
  let local: LocalProcess;
  let call: ReturnType<typeof clientOf>;
  const register = (url: string) => call('/webhooks/register', { apiKey: local.apiKey, body: { url, eventTypes: ['message.created'] } });

  beforeAll(async () => {
    local = await startLocalProcess({ args: ['--in-memory'], env: { WEBHOOK_ALLOW_PRIVATE_TARGETS: 'false' } });
    call = clientOf(local.baseUrl);
  }, 60_000);
  afterAll(() => local?.stop());

  it.each([
    'http://127.0.0.1:8080/hook',
    'http://localhost:8080/hook',
    'https://127.0.0.1/hook',
    'https://10.0.0.1/hook',
    'https://172.16.5.4/hook',
    'https://192.168.1.10/hook',
    'https://169.254.169.254/latest/meta-data/',
    'https://100.64.0.1/hook',
    'https://0.0.0.0/hook',
    'https://[::1]/hook',
    'https://[fd00:ec2::254]/hook',
    'https://[fe80::1]/hook',
    'https://localhost/hook',
    'https://2130706433/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://[::ffff:169.254.169.254]/latest/meta-data/',
  ])('refuses %s with 400 and stores nothing', async (url) => {
    // Act
    const refused = await register(url);

    // Assess
    expect(refused.status).toBe(400);
    expect(['webhook_url_private', 'webhook_url_not_https']).toContain(refused.body.error.code);
    const listed = await call('/webhooks', { apiKey: local.apiKey });
    expect(listed.body.webhooks.map((webhook: { url: string }) => webhook.url)).not.toContain(new URL(url).toString());
  });

  it('accepts an https URL to a public host', async () => {
    // Act
    const registered = await register(URL_OK);

    // Assess
    expect(registered.status).toBe(201);
    expect(registered.body.url).toBe(URL_OK);
  });

  it.each([
    'https://localhost./hook',
    'https://a.localhost/hook',
    'https://x.internal/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://2130706433/hook',
    // NAT64 local-use and IPv4-translated forms of the instance metadata address.
    'https://[64:ff9b:1::a9fe:a9fe]/latest/meta-data/',
    'https://[::ffff:0:a9fe:a9fe]/latest/meta-data/',
  ])('refuses the private spelling %s with webhook_url_private', async (url) => {
    // Act
    const refused = await register(url);

    // Assess
    expect(refused.status).toBe(400);
    expect(refused.body.error.code).toBe('webhook_url_private');
  });
});
