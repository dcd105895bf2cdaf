import { createHmac, randomBytes } from 'node:crypto';
import { beforeAll, expect } from 'vitest';
import { api } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/** Project A against project B on the Webhooks area's routes (registrations, signature checks, deliveries); the matrix is `tenant-driver.ts`. */

const tenants = tenantsBeforeAll();

/** A webhook of each project; B's secret is known to the test (as to B) and never to A. */
let aWebhook: any;
let bWebhook: any;
const A_WEBHOOK_SECRET = 'a-webhook-secret-0123456789';
const B_WEBHOOK_SECRET = 'b-webhook-secret-0123456789';
const B_WEBHOOK_URL = 'https://example.com/b-private-hook';

beforeAll(async () => {
  const { a, b } = tenants();
  [aWebhook, bWebhook] = await Promise.all([
    api('/webhooks/register', {
      apiKey: a.apiKey,
      body: { url: 'https://example.com/a-hook', eventTypes: ['message.created'], secret: A_WEBHOOK_SECRET },
    }).then((response) => response.body),
    api('/webhooks/register', {
      apiKey: b.apiKey,
      body: { url: B_WEBHOOK_URL, eventTypes: ['message.created', 'mention'], secret: B_WEBHOOK_SECRET },
    }).then((response) => response.body),
  ]);
});

const bWebhooks = async () => (await api('/webhooks', { apiKey: tenants().b.apiKey })).body.webhooks as any[];
const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('hex');
/** A well-formed delivery id; the shared runtime runs no queue consumers, so no project has deliveries. */
const unknownDeliveryId = () => `whd_${randomBytes(16).toString('hex')}`;

describeTenantMatrix('Webhooks', tenants, {
  async ListWebhookEventTypes({ a, b }) {
    // Act
    const [withA, withB, anonymous] = await Promise.all([
      api('/webhooks/event-types', { apiKey: a.apiKey }),
      api('/webhooks/event-types', { apiKey: b.apiKey }),
      api('/webhooks/event-types'),
    ]);

    // Assess: no tenant data at all, the same catalogue for everyone
    expect(withA.status).toBe(200);
    expect(Object.keys(withA.body)).toEqual(['events']);
    expect(JSON.stringify(withA.body)).not.toContain(b.projectId);
    expect(withB.body).toEqual(withA.body);
    expect(anonymous.body).toEqual(withA.body);
  },

  async RegisterWebhook({ a, b, aCallers }) {
    // Prepare
    const before = await bWebhooks();

    // Act
    const registered = await Promise.all(
      aCallers().map(({ auth }) =>
        api('/webhooks/register', { ...auth, body: { url: 'https://example.com/a-second-hook', eventTypes: ['mention'] } }),
      ),
    );
    const smuggled = await api('/webhooks/register', {
      apiKey: a.apiKey,
      body: { url: 'https://example.com/a-hook', eventTypes: ['mention'], projectId: b.projectId },
    });

    // Assess: A's registrations are A's (the id names A), B's list is as it was
    for (const response of registered) {
      expect(response.status).toBe(201);
      expect(response.body.id.startsWith(`wh_${a.projectId}_`)).toBe(true);
    }
    expect(smuggled).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(await bWebhooks()).toEqual(before);
  },

  async ListWebhooks({ a, aCallers }) {
    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api('/webhooks', auth)));

    // Assess
    for (const list of lists) {
      expect(list.status).toBe(200);
      const ids = list.body.webhooks.map((webhook: any) => webhook.id);
      expect(ids).toContain(aWebhook.id);
      expect(ids).not.toContain(bWebhook.id);
      for (const id of ids) expect(id.startsWith(`wh_${a.projectId}_`)).toBe(true);
      expect(JSON.stringify(list.body)).not.toContain(B_WEBHOOK_URL);
    }
    expect((await bWebhooks()).map((webhook) => webhook.id)).toEqual([bWebhook.id]);
  },

  async DeleteWebhook({ a, b, aCallers }) {
    // Prepare: B's id, and B's random part under A's project prefix
    const bRandom = bWebhook.id.slice(`wh_${b.projectId}_`.length);

    // Act + Assess
    await expectAllNotFound(
      aCallers().flatMap(({ who, auth }) =>
        [bWebhook.id, `wh_${a.projectId}_${bRandom}`].map((webhookId) => ({
          label: `${who} ${webhookId}`,
          call: () => api(`/webhooks/${webhookId}`, { ...auth, method: 'DELETE' }),
        })),
      ),
      'webhook_not_found',
    );
    expect((await bWebhooks()).map((webhook) => webhook.id)).toEqual([bWebhook.id]);
  },

  async VerifyWebhook({ a, b, aAdmin }) {
    // Prepare: public by design, anyone holding a body and its signature may check them against B's webhook
    const body = JSON.stringify({ type: 'message.created', projectId: b.projectId });

    // Act
    const signedByB = await api('/webhooks/verify', {
      apiKey: a.apiKey,
      body: { webhookId: bWebhook.id, body, signature: sign(B_WEBHOOK_SECRET, body) },
    });
    const signedByA = await api('/webhooks/verify', {
      token: aAdmin,
      body: { webhookId: bWebhook.id, body, signature: sign(A_WEBHOOK_SECRET, body) },
    });

    // Assess: only {valid}, no secret or registration detail; A's secret does not pass for B's webhook
    expect({ status: signedByB.status, body: signedByB.body }).toEqual({ status: 200, body: { valid: true } });
    expect({ status: signedByA.status, body: signedByA.body }).toEqual({ status: 200, body: { valid: false } });
    for (const response of [signedByB, signedByA]) {
      const text = JSON.stringify(response.body);
      for (const leak of [B_WEBHOOK_SECRET, B_WEBHOOK_URL, bWebhook.createdAt]) expect(text).not.toContain(leak);
    }
  },

  async VerifyWebhookSignatures({ a }) {
    // Prepare
    const body = 'tenant-free payload';

    // Act
    const checked = await api('/webhooks/verify-batch', {
      apiKey: a.apiKey,
      body: { secret: A_WEBHOOK_SECRET, body, signature: sign(A_WEBHOOK_SECRET, body) },
    });
    const lookup = await api('/webhooks/verify-batch', {
      apiKey: a.apiKey,
      body: { webhookId: bWebhook.id, body, signature: sign(B_WEBHOOK_SECRET, body) },
    });

    // Assess: no tenant data at all; the caller brings the secret and cannot have a registered one looked up
    expect({ status: checked.status, body: checked.body }).toEqual({ status: 200, body: { valid: true } });
    expect(lookup).toMatchObject({ status: 400, body: { error: { code: 'validation_failed' } } });
    expect(JSON.stringify(lookup.body)).not.toContain(B_WEBHOOK_SECRET);
  },

  async ListWebhookDeliveries({ aCallers }) {
    // Act
    const lists = await Promise.all(aCallers().map(({ auth }) => api('/admin/webhooks/deliveries?limit=100', auth)));

    // Assess: A has no deliveries, so anything listed would be another tenant's
    for (const list of lists) expect({ status: list.status, body: list.body }).toEqual({ status: 200, body: { deliveries: [] } });
  },

  async ReplayWebhookDelivery({ aCallers }) {
    // Act + Assess: an id A does not own answers as an id that does not exist
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => {
        const deliveryId = unknownDeliveryId();
        return {
          label: `${who} ${deliveryId}`,
          call: () => api(`/admin/webhooks/deliveries/${deliveryId}/replay`, { ...auth, method: 'POST' }),
        };
      }),
      'delivery_not_found',
    );
  },
});
