import { createHmac, randomBytes } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { api, createTestProject, type TestProject, uniqueId } from '../../support/api';
import {
  type Body,
  describeValidationMatrix,
  drop,
  expectInvalid,
  long,
  type RouteRequests,
  sender,
  set,
  type Variant,
} from '../../support/matrices/validation-driver';
import { seedFailedDelivery } from '../../support/webhook-deliveries';

/** Bad input to the Webhooks area's routes (registrations, signature checks, deliveries); the checks are the matrix's (`validation-driver.ts`). */

let project: TestProject;
const WEBHOOK_SECRET = 'validation-webhook-secret';
const VERIFY_BODY = '{"type":"message.created"}';
const sign = (secret: string, body: string) => createHmac('sha256', secret).update(body, 'utf8').digest('hex');
/** The webhook the VerifyWebhook requests check against. */
let verifyWebhookId: string;
/** Registrations for the DeleteWebhook requests to delete, one per request. */
const disposableWebhookIds: string[] = [];
/** A failed delivery for the ReplayWebhookDelivery control (the shared runtime runs no queue consumers, so none arise). */
const failedDeliveryId = `whd_${randomBytes(16).toString('hex')}`;

const registerWebhook = async (secret?: string) =>
  (
    await api('/webhooks/register', {
      apiKey: project.apiKey,
      body: { url: `https://example.com/hooks/${uniqueId('hook')}`, eventTypes: ['message.created'], ...(secret ? { secret } : {}) },
    })
  ).body.id as string;

beforeAll(async () => {
  project = await createTestProject('validation-webhooks');
  let disposable: string[];
  [verifyWebhookId, disposable] = await Promise.all([
    registerWebhook(WEBHOOK_SECRET),
    Promise.all(Array.from({ length: 3 }, () => registerWebhook())),
    seedFailedDelivery(project.projectId, failedDeliveryId, VERIFY_BODY),
  ]);
  disposableWebhookIds.push(...disposable);
});

/** How to make a request each route of the area accepts. */
const requests: RouteRequests = {
  ListWebhookEventTypes: { path: () => '/webhooks/event-types', auth: () => ({}), success: 200 },
  RegisterWebhook: {
    path: () => '/webhooks/register',
    auth: () => ({ apiKey: project.apiKey }),
    body: () => ({ url: 'https://example.com/hook', eventTypes: ['message.created', 'mention'], secret: 'a-valid-secret-of-some-length' }),
    success: 201,
  },
  ListWebhooks: { path: () => '/webhooks', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  DeleteWebhook: {
    path: () => `/webhooks/${disposableWebhookIds.pop() ?? 'wh_none_left'}`,
    auth: () => ({ apiKey: project.apiKey }),
    success: 204,
  },
  VerifyWebhook: {
    path: () => '/webhooks/verify',
    auth: () => ({}),
    body: () => ({ webhookId: verifyWebhookId, body: VERIFY_BODY, signature: sign(WEBHOOK_SECRET, VERIFY_BODY) }),
    success: 200,
  },
  VerifyWebhookSignatures: {
    path: () => '/webhooks/verify-batch',
    auth: () => ({}),
    body: () => ({ secret: WEBHOOK_SECRET, body: VERIFY_BODY, signature: sign(WEBHOOK_SECRET, VERIFY_BODY) }),
    success: 200,
  },
  ListWebhookDeliveries: { path: () => '/admin/webhooks/deliveries', auth: () => ({ apiKey: project.apiKey }), success: 200 },
  ReplayWebhookDelivery: {
    path: () => `/admin/webhooks/deliveries/${failedDeliveryId}/replay`,
    auth: () => ({ apiKey: project.apiKey }),
    success: 202,
  },
};

/** The batch form of VerifyWebhookSignatures: `events` instead of `body`. */
const toEvents =
  (events: unknown) =>
  ({ body: _body, ...rest }: Body): Body => ({ ...rest, events });

const fieldVariants: Record<string, Variant[]> = {
  RegisterWebhook: [
    ['url missing', drop('url'), 'body.url'],
    ['url a number', set('url', 42), 'body.url'],
    ['url null', set('url', null), 'body.url'],
    ['url empty', set('url', ''), 'body.url'],
    ['url of 2049 characters', set('url', `https://e.com/${long(2035)}`), 'body.url'],
    ['eventTypes missing', drop('eventTypes'), 'body.eventTypes'],
    ['eventTypes a string', set('eventTypes', 'message.created'), 'body.eventTypes'],
    ['eventTypes empty', set('eventTypes', []), 'body.eventTypes'],
    [
      'eventTypes with 51 entries',
      set(
        'eventTypes',
        Array.from({ length: 51 }, () => 'message.created'),
      ),
      'body.eventTypes',
    ],
    ['eventTypes with a number', set('eventTypes', ['mention', 42]), 'body.eventTypes.1'],
    ['eventTypes with an empty entry', set('eventTypes', ['']), 'body.eventTypes.0'],
    ['eventTypes with an entry of 101 characters', set('eventTypes', [long(101)]), 'body.eventTypes.0'],
    ['secret a number', set('secret', 1234567890123456), 'body.secret'],
    ['secret null', set('secret', null), 'body.secret'],
    ['secret of 15 characters', set('secret', long(15)), 'body.secret'],
    ['secret of 257 characters', set('secret', long(257)), 'body.secret'],
  ],
  VerifyWebhook: [
    ['webhookId missing', drop('webhookId'), 'body.webhookId'],
    ['webhookId a number', set('webhookId', 42), 'body.webhookId'],
    ['webhookId null', set('webhookId', null), 'body.webhookId'],
    ['webhookId empty', set('webhookId', ''), 'body.webhookId'],
    ['webhookId of 201 characters', set('webhookId', long(201)), 'body.webhookId'],
    ['body missing', drop('body'), 'body.body'],
    ['body a number', set('body', 42), 'body.body'],
    ['body an object', set('body', { type: 'message.created' }), 'body.body'],
    ['body over 256 KiB', set('body', long(256 * 1024 + 1)), 'body.body'],
    ['signature a number', set('signature', 42), 'body.signature'],
    ['signature of 201 characters', set('signature', long(201)), 'body.signature'],
  ],
  VerifyWebhookSignatures: [
    ['secret missing', drop('secret'), 'body.secret'],
    ['secret a number', set('secret', 42), 'body.secret'],
    ['secret empty', set('secret', ''), 'body.secret'],
    ['secret of 257 characters', set('secret', long(257)), 'body.secret'],
    ['body a number', set('body', 42), 'body.body'],
    ['body over 256 KiB', set('body', long(256 * 1024 + 1)), 'body.body'],
    ['signature a number', set('signature', 42), 'body.signature'],
    ['signature of 201 characters', set('signature', long(201)), 'body.signature'],
    ['neither body nor events', drop('body'), 'body'],
    ['both body and events', set('events', [{ type: 'message.created' }]), 'body'],
    ['events empty', toEvents([]), 'body.events'],
    ['events a string', toEvents('[]'), 'body.events'],
    ['events with 1001 entries', toEvents(Array.from({ length: 1001 }, (_, i) => i)), 'body.events'],
  ],
};

describeValidationMatrix('Webhooks', requests, fieldVariants);

describe('query parameters', () => {
  it.each(['0', '101', '1.5', '-1', 'lots'])('GET /admin/webhooks/deliveries?limit=%s → 400 naming query.limit', async (limit) => {
    // Act
    const response = await api(`/admin/webhooks/deliveries?limit=${limit}`, { apiKey: project.apiKey });

    // Assess
    expectInvalid(response, 'query.limit');
  });

  it.each(['1', '100'])('GET /admin/webhooks/deliveries?limit=%s is accepted (the bounds)', async (limit) => {
    // Act
    const response = await api(`/admin/webhooks/deliveries?limit=${limit}`, { apiKey: project.apiKey });

    // Assess
    expect({ status: response.status, error: response.body?.error }).toEqual({ status: 200, error: undefined });
  });
});

const send = sender(requests);

describe('webhook signature checks', () => {
  it.each(['VerifyWebhook', 'VerifyWebhookSignatures'])(
    '%s without a signature in the body or a header → 400 naming body.signature',
    async (id) => {
      // Act
      const response = await send(id, { body: drop('signature')(requests[id]?.body?.() ?? {}) });

      // Assess
      expectInvalid(response, 'body.signature');
    },
  );

  it('VerifyWebhookSignatures accepts the batch form (control for the events variants)', async () => {
    // Prepare
    const events = [{ type: 'message.created' }, { type: 'mention' }];

    // Act
    const response = await send('VerifyWebhookSignatures', {
      body: { secret: WEBHOOK_SECRET, events, signature: sign(WEBHOOK_SECRET, JSON.stringify(events)) },
    });

    // Assess
    expect({ status: response.status, body: response.body }).toEqual({ status: 200, body: { valid: true, count: 2 } });
  });
});
