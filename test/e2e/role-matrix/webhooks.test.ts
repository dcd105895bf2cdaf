import { randomBytes } from 'node:crypto';
import { afterAll, expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { describeRoleMatrix, roleMatrixBeforeAll } from '../../support/matrices/role-driver';

/** Who may register, list and delete webhooks and see or replay deliveries; the matrix is `role-driver.ts`. */

const roles = roleMatrixBeforeAll('roles-webhooks');
const { project } = roles;
const webhooksOf = async () => (await api('/webhooks', { apiKey: project.apiKey })).body.webhooks as any[];
const newWebhookByKey = async () => {
  const registered = await api('/webhooks/register', {
    apiKey: project.apiKey,
    body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes: ['message.created'] },
  });
  return registered.body.id as string;
};
/** A well-formed delivery id that exists nowhere (the shared runtime runs no queue consumers, so it makes no deliveries). */
const unknownDeliveryId = () => `whd_${randomBytes(16).toString('hex')}`;

afterAll(async () => {
  // The cases leave registrations (at example.com) behind: with them, a message posted in the project later
  // would start a delivery that is still resolving the host when the runtime stops.
  await Promise.all((await webhooksOf()).map((webhook) => api(`/webhooks/${webhook.id}`, { apiKey: project.apiKey, method: 'DELETE' })));
});

describeRoleMatrix('Webhooks', roles, {
  minRole: {
    RegisterWebhook: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const url = `https://example.com/hooks/${uniqueId('hook')}`;
        const response = await api('/webhooks/register', { ...auth, body: { url, eventTypes: ['message.created'] } });
        return {
          ...response,
          check: async (allowed) => expect((await webhooksOf()).some((webhook) => webhook.url === url)).toBe(allowed),
        };
      },
    },
    ListWebhooks: {
      minRole: 'admin',
      success: 200,
      act: (auth) => api('/webhooks', auth),
    },
    DeleteWebhook: {
      minRole: 'admin',
      success: 204,
      async act(auth) {
        const webhookId = await newWebhookByKey();
        const response = await api(`/webhooks/${webhookId}`, { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => expect((await webhooksOf()).some((webhook) => webhook.id === webhookId)).toBe(!allowed),
        };
      },
    },
    ListWebhookDeliveries: {
      minRole: 'moderator',
      success: 200,
      act: (auth) => api('/admin/webhooks/deliveries', auth),
    },
    ReplayWebhookDelivery: {
      minRole: 'admin',
      // No delivery exists in this runtime: getting past the role check means 404 delivery_not_found, not 403.
      success: 404,
      async act(auth) {
        const response = await api(`/admin/webhooks/deliveries/${unknownDeliveryId()}/replay`, { ...auth, method: 'POST' });
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body?.error?.code).toBe('delivery_not_found');
          },
        };
      },
    },
  },
});
