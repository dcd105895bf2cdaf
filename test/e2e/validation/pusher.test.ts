import { beforeAll, describe, expect, it } from 'vitest';
import { api } from '../../support/api';
import {
  createValidationProject,
  describeValidationMatrix,
  drop,
  long,
  type RouteRequests,
  set,
  type ValidationProject,
  type Variant,
} from '../../support/matrices/validation-driver';
import { createPusherApp, type PusherAppKeys, pusherSignedQuery, sendSignedTrigger } from '../../support/pusher';

/**
 * Bad input to the Pusher routes; the checks common to every route are the matrix's
 * (`validation-driver.ts`). `/auth/channel` takes JSON here (its form-encoded bodies are
 * test/e2e/pusher-http.test.ts's). The trigger API verifies the raw bytes before it parses them,
 * so its valid requests are signed bytes, and its body checks (below the matrix) sign each bad
 * body as a Pusher library would: unsigned, it would be refused 401 before it was read.
 */

let fixture: ValidationProject;
/** Another project, whose app the PutPusherApp requests rotate, so the trigger requests' app stays as signed. */
let rotating: ValidationProject;
let app: PusherAppKeys;

beforeAll(async () => {
  [fixture, rotating] = await Promise.all([
    createValidationProject('validation-pusher'),
    createValidationProject('validation-pusher-rotating'),
  ]);
  app = await createPusherApp(fixture.project.apiKey);
});

const admin = () => ({ token: fixture.adminToken });
const eventText = () => JSON.stringify({ name: 'valid', data: '{}', channel: `private-room-${fixture.roomId}` });
const batchText = () => JSON.stringify({ batch: [{ name: 'valid', data: '{}', channel: `private-room-${fixture.roomId}` }] });
const signedPath = (endpoint: string, text: string) => {
  const path = `/apps/${app.appId}/${endpoint}`;
  return `${path}?${pusherSignedQuery(app, path, text)}`;
};

const requests: RouteRequests = {
  PutPusherApp: { path: () => '/admin/pusher-app', auth: () => ({ token: rotating.adminToken }), success: 201 },
  GetPusherApp: { path: () => '/admin/pusher-app', auth: admin, success: 200 },
  AuthorizeChannel: {
    path: () => '/auth/channel',
    auth: () => ({ token: fixture.memberToken }),
    body: () => ({ socket_id: '123.456', channel_name: `presence-room-${fixture.roomId}`, presenceInfo: { name: 'Ann' } }),
    success: 200,
  },
  PusherTriggerEvents: {
    path: () => signedPath('events', eventText()),
    auth: () => ({}),
    raw: () => ({ bytes: Buffer.from(eventText()), contentType: 'application/json' }),
    success: 200,
  },
  PusherTriggerBatchEvents: {
    path: () => signedPath('batch_events', batchText()),
    auth: () => ({}),
    raw: () => ({ bytes: Buffer.from(batchText()), contentType: 'application/json' }),
    success: 200,
  },
};

const fieldVariants: Record<string, Variant[]> = {
  AuthorizeChannel: [
    ['socket_id missing', drop('socket_id'), 'body.socket_id'],
    ['socket_id a number', set('socket_id', 123.456), 'body.socket_id'],
    ['socket_id empty', set('socket_id', ''), 'body.socket_id'],
    ['socket_id of 201 characters', set('socket_id', long(201)), 'body.socket_id'],
    ['channel_name missing', drop('channel_name'), 'body.channel_name'],
    ['channel_name null', set('channel_name', null), 'body.channel_name'],
    ['channel_name of 201 characters', set('channel_name', long(201)), 'body.channel_name'],
    ['presenceInfo a number', set('presenceInfo', 7), 'body.presenceInfo'],
    ['presenceInfo an array', set('presenceInfo', ['a']), 'body.presenceInfo'],
    ['presenceInfo text that is not JSON', set('presenceInfo', 'not json'), 'body.presenceInfo'],
    ['presenceInfo over 1 KB', set('presenceInfo', { pad: long(1100) }), 'body.presenceInfo'],
  ],
};

describeValidationMatrix('Pusher', requests, fieldVariants);

describe('/auth/channel formats beyond the schema', () => {
  it.each([
    ['socket_id', { socket_id: '123' }, 'invalid_socket_id'],
    ['channel_name', { channel_name: 'presence-lobby' }, 'invalid_channel_name'],
  ])('a bad %s → 400 %s naming the field', async (field, change, code) => {
    // Act
    const response = await api('/auth/channel', {
      token: fixture.memberToken,
      body: { ...requests.AuthorizeChannel?.body?.(), ...change },
    });

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code });
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ field: `body.${field}` }));
  });
});

describe.each([
  { endpoint: 'events' as const, valid: () => JSON.parse(eventText()) },
  { endpoint: 'batch_events' as const, valid: () => JSON.parse(batchText()) },
])('/apps/{appId}/$endpoint body, signed as a Pusher library signs', ({ endpoint, valid }) => {
  const sendSigned = (text: string) => sendSignedTrigger(app, endpoint, text);

  it('answers 400 invalid_json to malformed JSON', async () => {
    // Act
    const response = await sendSigned('{"name": "unterminated');

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'invalid_json' });
  });

  it.each(['null', '[]', '"text"', '42'])('answers 400 validation_failed to the JSON value %s', async (text) => {
    // Act
    const response = await sendSigned(text);

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
  });

  it('answers 413 payload_too_large to a body over 1 MiB', async () => {
    // Act
    const response = await sendSigned(JSON.stringify({ ...valid(), padding: 'x'.repeat(1024 * 1024) }));

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 413, code: 'payload_too_large' });
  });

  it('answers 400 naming an unknown field', async () => {
    // Act
    const response = await sendSigned(JSON.stringify({ ...valid(), bogusField: 1 }));

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(JSON.stringify(response.body.error.details)).toContain('bogusField');
  });
});

describe('/apps/{appId}/events fields, signed', () => {
  const variants: Variant[] = [
    ['name missing', drop('name'), 'body.name'],
    ['name of 201 characters', set('name', long(201)), 'body.name'],
    ['a pusher: name', set('name', 'pusher:subscribe'), 'body.name'],
    ['data an object', set('data', { a: 1 }), 'body.data'],
    ['neither channels nor channel', drop('channel'), 'body'],
    [
      '101 channels',
      (body) =>
        set(
          'channels',
          Array.from({ length: 101 }, (_, i) => `private-room-r${i}`),
        )(drop('channel')(body)),
      'body.channels',
    ],
    ['a channel with a space', set('channel', 'private-room-a b'), 'body.channel'],
  ];

  it.each(variants.map(([label, change, field]) => ({ label, change, field })))('$label → 400 naming $field', async ({ change, field }) => {
    // Act
    const response = await sendSignedTrigger(app, 'events', JSON.stringify(change(JSON.parse(eventText()))));

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ field }));
  });
});

describe('/apps/{appId}/batch_events fields, signed', () => {
  const one = () => ({ name: 'valid', data: '{}', channel: `private-room-${fixture.roomId}` });
  const variants: [string, () => unknown, string][] = [
    ['an empty batch', () => ({ batch: [] }), 'body.batch'],
    ['11 events', () => ({ batch: Array.from({ length: 11 }, one) }), 'body.batch'],
    ['an event without its channel', () => ({ batch: [drop('channel')(one())] }), 'body.batch.0.channel'],
    ['an event with channels', () => ({ batch: [{ ...one(), channels: ['private-room-x'] }] }), 'body.batch.0'],
  ];

  it.each(variants.map(([label, body, field]) => ({ label, body, field })))('$label → 400 naming $field', async ({ body, field }) => {
    // Act
    const response = await sendSignedTrigger(app, 'batch_events', JSON.stringify(body()));

    // Assess
    expect({ status: response.status, code: response.body?.error?.code }).toEqual({ status: 400, code: 'validation_failed' });
    expect(response.body.error.details).toContainEqual(expect.objectContaining({ field }));
  });
});
