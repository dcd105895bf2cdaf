import { describe, expect, it } from 'vitest';
import { functionEntries, httpRoutes, queues, stateMachines, webSocketRoutes } from '#wiring';
import {
  type Binding,
  bindingKinds,
  bindingVariable,
  type LocalStandIns,
  outboundHosts,
  parseBinding,
  secretDefinitions,
} from '#wiring/bindings';

/**
 * The registry of binding kinds (`functions/wiring/bindings.ts`) against the wiring table: every binding an
 * entry names is one the registry knows, names a resource that exists, and reaches the handler
 * through one variable, locally with its stand-in's value.
 */

const standIns: LocalStandIns = {
  tableName: 'chat',
  queueUrls: Object.fromEntries(queues.map((queue) => [queue.id, `http://127.0.0.1:1/000000000000/chat-${queue.id}`])),
  eventTopicArn: 'arn:aws:sns:us-east-1:000000000000:chat-events',
  stateMachineArns: { WebhookRetry: 'arn:aws:states:us-east-1:000000000000:stateMachine:chat-WebhookRetry' },
  secretArns: Object.fromEntries(Object.keys(secretDefinitions).map((secretId) => [secretId, `arn:${secretId}`])),
  connectionsEndpoint: 'http://127.0.0.1:8787',
  settings: { AI_BASE_URL: 'http://127.0.0.1:9/v1' },
  apiBaseUrl: 'http://127.0.0.1:8787',
  buckets: { attachments: 'chat-attachments' },
};

const wired = [...new Set(functionEntries.flatMap((entry) => entry.bindings))].sort();

describe('the bindings of the wiring table', () => {
  it.each(wired)('%s is a kind the registry knows, with a parameter it accepts', (binding) => {
    // Act
    const parsed = parseBinding(binding);

    // Assess
    expect(Object.keys(bindingKinds)).toContain(parsed.kindId);
  });

  it('name only shared queues, state machines and secrets that exist', () => {
    // Act
    const named = wired.map((binding) => parseBinding(binding));

    // Assess
    const ids = (kind: string) => named.filter((binding) => binding.kindId === kind).map((binding) => binding.parameter);
    expect(ids('queue').every((queueId) => queues.some((queue) => queue.id === queueId))).toBe(true);
    expect(ids('stateMachine').every((machineId) => stateMachines.some((machine) => machine.id === machineId))).toBe(true);
    expect(ids('secret').every((secretId) => secretId in secretDefinitions)).toBe(true);
  });

  it.each(wired)('%s has a value in the local runtime', (binding) => {
    // Prepare
    const { kind, parameter } = parseBinding(binding);

    // Act
    const value = kind.local(parameter, standIns);

    // Assess
    expect(value).toEqual(expect.any(String));
  });
});

describe('parseBinding', () => {
  it.each(['bucket:attachments', 'secret:nope', 'outbound:example', 'events:subscribe', 'table:scan', 'queue'])(
    'refuses %s, which no kind accepts',
    (binding) => {
      // Act
      const parse = () => parseBinding(binding as Binding);

      // Assess
      expect(parse).toThrow(/Unknown binding/);
    },
  );
});

describe('secret:signing-key', () => {
  /** Functions that open signing secrets or VAPID private keys without a user-token auth kind. */
  const openersBesideTokenRoutes = [
    'CreateProject',
    'CreateToken',
    // Signs the guest session's token.
    'CreateGuestSession',
    // Verifies a GDPR export link's MAC, keyed with the project's signing secret.
    'DownloadSubjectExport',
    // Sign and verify a digest e-mail's unsubscribe link, keyed from the project's signing secret.
    'DigestWorker',
    'UnsubscribeDigestEmail',
    'GetFeatureFlags',
    'GetVapidPublicKey',
    'PushDispatcher',
    'PushSender',
    'RotateProjectKeys',
    'SignIn',
    'WsConnect',
  ];

  it('binds exactly the routes that verify user tokens (by their auth kind) and the functions that sign tokens or open VAPID keys', () => {
    // Prepare
    const tokenRoutes = httpRoutes.filter((route) => route.auth === 'user' || route.auth === 'userOrService').map((route) => route.id);

    // Act
    const bound = functionEntries.filter((entry) => entry.bindings.includes('secret:signing-key')).map((entry) => entry.id);

    // Assess
    expect(tokenRoutes.length).toBeGreaterThan(0);
    expect(bound.sort()).toEqual([...tokenRoutes, ...openersBesideTokenRoutes].sort());
  });
});

describe('the origin-verify secret', () => {
  it('is bound to every function of an HTTP API route and to $connect, and to nothing else (the SSE function URL is closed by OAC)', () => {
    // Prepare
    const apiRoutes = httpRoutes.filter((route) => (route.transport ?? 'httpApi') === 'httpApi').map((route) => route.id);
    const connect = webSocketRoutes.filter((route) => route.routeKey === '$connect').map((route) => route.id);

    // Act
    const bound = functionEntries.filter((entry) => entry.bindings.includes('secret:origin-verify')).map((entry) => entry.id);

    // Assess
    expect(apiRoutes.length).toBeGreaterThan(100);
    expect(connect).toEqual(['WsConnect']);
    expect(bound.sort()).toEqual([...apiRoutes, ...connect].sort());
    expect(bound).not.toContain('StreamRoom');
    expect(bindingVariable('secret:origin-verify')).toBe('ORIGIN_VERIFY_SECRET_ARN');
  });
});

describe('bindingVariable', () => {
  it.each([
    ['table:read', 'TABLE_NAME'],
    ['table:write', 'TABLE_NAME'],
    ['queue:Realtime', 'REALTIME_QUEUE_URL'],
    ['events:publish', 'EVENTS_TOPIC_ARN'],
    ['stateMachine:WebhookRetry', 'WEBHOOK_RETRY_STATE_MACHINE_ARN'],
    ['secret:operator-key', 'OPERATOR_KEY_SECRET_ARN'],
    ['secret:webhook-key', 'WEBHOOK_KEY_SECRET_ARN'],
    ['secret:signing-key', 'SIGNING_KEY_SECRET_ARN'],
    ['connections:manage', 'CONNECTIONS_ENDPOINT'],
    ['bucket:attachments:read', 'ATTACHMENTS_BUCKET'],
    ['bucket:attachments:write', 'ATTACHMENTS_BUCKET'],
    ['outbound:fcm', 'FCM_BASE_URL'],
  ] as const)('names %s %s', (binding, variable) => {
    // Act
    const name = bindingVariable(binding);

    // Assess
    expect(name).toBe(variable);
  });

  it('never gives a secret value a variable: a secret binding carries its ARN', () => {
    // Act
    const variables = Object.keys(secretDefinitions).map((secretId) => bindingVariable(`secret:${secretId}` as Binding));

    // Assess
    for (const variable of variables) expect(variable).toMatch(/_SECRET_ARN$/);
    for (const { setting } of Object.values(secretDefinitions)) expect(variables).not.toContain(setting);
  });
});

describe('outbound hosts', () => {
  it('default to the real hosts locally, and a setting points one at a local server', () => {
    // Act
    const fcm = bindingKinds.outbound.local('fcm', standIns);
    const ai = bindingKinds.outbound.local('ai', standIns);
    const aiUnset = bindingKinds.outbound.local('ai', { ...standIns, settings: {} });

    // Assess
    expect(fcm).toBe(outboundHosts.fcm.default);
    expect(ai).toBe('http://127.0.0.1:9/v1');
    expect(aiUnset).toBeUndefined();
  });
});
