import { SignJWT } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';

/**
 * Client feature flags: `GET /client/feature-flags` answers the defaults to anyone and a project's
 * overrides to a bearer of its token (`flagship: true`); `PUT /admin/feature-flags` sets those
 * overrides, `reconnect_backoff_fluxy` switching the reconnect curve from 1 s / 8 s to 500 ms / 20 s.
 */

const DEFAULT_FLAGS = { voice_messages: true, reply_suggestions: true, embed_widget: true, reconnect_backoff_fluxy: false };
const CLASSIC = { baseBackoffMs: 1000, maxBackoffMs: 8000 };
const FLUXY = { baseBackoffMs: 500, maxBackoffMs: 20_000 };

let flagged: TestProject;
let plain: TestProject;
beforeAll(async () => {
  [flagged, plain] = await Promise.all([createTestProject('flags-on'), createTestProject('flags-off')]);
});

const flagsFor = (token?: string) => api('/client/feature-flags', { token });
const setOverrides = (auth: { token?: string; apiKey?: string }, overrides: Record<string, unknown>) =>
  api('/admin/feature-flags', { ...auth, method: 'PUT', body: { overrides } });

describe('GET /client/feature-flags', () => {
  it('answers the defaults without a token, not targeted (flagship false), with the 1 s / 8 s backoff', async () => {
    // Act
    const response = await flagsFor();

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({
      status: 200,
      body: { flags: DEFAULT_FLAGS, flagship: false, reconnectBackoff: CLASSIC },
    });
  });

  it("answers a project's overrides to its token, and leaves other projects on the defaults", async () => {
    // Prepare
    const admin = await flagged.token(uniqueId('admin'), ['admin']);
    const set = await setOverrides({ token: admin }, { reconnect_backoff_fluxy: true });

    // Act
    const [ownUser, otherUser, anonymous] = await Promise.all([
      flagsFor(await flagged.token(uniqueId('user'))),
      flagsFor(await plain.token(uniqueId('user'))),
      flagsFor(),
    ]);

    // Assess
    expect({ status: set.status, body: set.body }).toEqual({ status: 200, body: { overrides: { reconnect_backoff_fluxy: true } } });
    expect(ownUser.body).toEqual({ flags: { ...DEFAULT_FLAGS, reconnect_backoff_fluxy: true }, flagship: true, reconnectBackoff: FLUXY });
    expect(otherUser.body).toEqual({ flags: DEFAULT_FLAGS, flagship: true, reconnectBackoff: CLASSIC });
    expect(anonymous.body).toEqual({ flags: DEFAULT_FLAGS, flagship: false, reconnectBackoff: CLASSIC });
  });

  it.each([
    { variant: 'a token that is not a JWT', authorization: 'Bearer not.a.jwt' },
    { variant: 'another scheme', authorization: 'Basic dXNlcjpwYXNz' },
    { variant: 'an expired token of a project with overrides', authorization: 'expired' },
  ])(
    'answers the anonymous defaults to $variant: a client whose token lapsed still needs its reconnect curve',
    async ({ authorization }) => {
      // Prepare
      const lapsed = await createTestProject('flags-lapsed');
      await api('/admin/feature-flags', { method: 'PUT', apiKey: lapsed.apiKey, body: { overrides: { reconnect_backoff_fluxy: true } } });
      const header =
        authorization === 'expired'
          ? `Bearer ${await new SignJWT({ projectId: lapsed.projectId, userId: 'late' })
              .setProtectedHeader({ alg: 'HS256' })
              .setExpirationTime(Math.floor(Date.now() / 1000) - 30)
              .sign(new TextEncoder().encode(lapsed.signingSecret))}`
          : authorization;

      // Act
      const response = await api('/client/feature-flags', { headers: { authorization: header } });

      // Assess
      expect({ status: response.status, body: response.body }).toEqual({
        status: 200,
        body: { flags: DEFAULT_FLAGS, flagship: false, reconnectBackoff: CLASSIC },
      });
    },
  );
});

describe('the admin feature flag routes', () => {
  it('replace the overrides as a whole: a flag left out returns to its default', async () => {
    // Prepare
    const project = await createTestProject('flags-replace');
    await setOverrides({ apiKey: project.apiKey }, { voice_messages: false, embed_widget: false });

    // Act
    const replaced = await setOverrides({ apiKey: project.apiKey }, { embed_widget: false });
    const read = await api('/admin/feature-flags', { apiKey: project.apiKey });
    const client = await flagsFor(await project.token(uniqueId('user')));

    // Assess
    expect(replaced.body).toEqual({ overrides: { embed_widget: false } });
    expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: { overrides: { embed_widget: false } } });
    expect(client.body.flags).toEqual({ ...DEFAULT_FLAGS, embed_widget: false });
  });

  it('answer an empty override set for a project that never set one', async () => {
    // Prepare
    const project = await createTestProject('flags-fresh');

    // Act
    const read = await api('/admin/feature-flags', { apiKey: project.apiKey });

    // Assess
    expect({ status: read.status, body: read.body }).toEqual({ status: 200, body: { overrides: {} } });
  });

  it.each([
    { variant: 'an unknown flag', overrides: { dark_mode: true }, field: 'body.overrides' },
    { variant: 'a value that is not a boolean', overrides: { voice_messages: 'yes' }, field: 'body.overrides.voice_messages' },
  ])('refuse $variant with 400 and keep the overrides', async ({ overrides, field }) => {
    // Prepare
    const project = await createTestProject('flags-invalid');
    await setOverrides({ apiKey: project.apiKey }, { reply_suggestions: false });

    // Act
    const response = await setOverrides({ apiKey: project.apiKey }, overrides);

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(response.body.error.details.map((detail: any) => detail.field).join(' ')).toContain(field);
    expect((await api('/admin/feature-flags', { apiKey: project.apiKey })).body).toEqual({ overrides: { reply_suggestions: false } });
  });

  it.each([
    { caller: 'a member', roles: undefined },
    { caller: 'a moderator', roles: ['moderator'] },
  ])('refuse $caller with 403 forbidden and change nothing', async ({ roles }) => {
    // Prepare
    const project = await createTestProject('flags-member');
    const token = await project.token(uniqueId('user'), roles);

    // Act
    const put = await setOverrides({ token }, { reconnect_backoff_fluxy: true });
    const get = await api('/admin/feature-flags', { token });

    // Assess
    expect({ status: put.status, code: put.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    expect({ status: get.status, code: get.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
    expect((await flagsFor(token)).body.reconnectBackoff).toEqual(CLASSIC);
  });
});
