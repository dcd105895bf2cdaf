import { createDecipheriv, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startDynamoDbLocal } from '../../lib/local/dynamodb-local';
import { api, clientOf, createTestProject, uniqueId } from '../support/api';
import { type LocalProcess, startLocalProcess } from '../support/local-process';
import { partition } from '../support/raw-table';
import { hmacSha256Hex, type ReceivedRequest, startWebhookReceiver, type WebhookReceiver } from '../support/webhook-receiver';

/**
 * The storage rule for webhook secrets: with `WEBHOOK_SECRET_ENCRYPTION_KEY` (64 hex or 43 base64
 * characters) the table holds AES-256-GCM ciphertext and IV only; without it, the plaintext. The
 * encrypted case runs a runtime of its own on a data folder, stops it, and reads the table files
 * with a DynamoDB Local of the test's own, so what is checked is what is on disk. Decryption uses
 * the test's own node:crypto code.
 */

const TABLE = 'chat';
const DEMO_WEBHOOKS_PK = 'P#demo#WEBHOOKS';

interface StoredWebhook {
  webhookId: string;
  secret?: string;
  secretCiphertext?: string;
  secretIv?: string;
  [field: string]: unknown;
}

/**
 * AES-256-GCM with a 12-byte IV; the last 16 bytes of the base64 ciphertext are the tag; the
 * associated data names what the value belongs to (`<purpose>|<projectId>|<recordId>`).
 */
function decrypt(key: Buffer, stored: StoredWebhook, aad: string): string {
  const sealed = Buffer.from(stored.secretCiphertext ?? '', 'base64');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(stored.secretIv ?? '', 'base64'));
  decipher.setAAD(Buffer.from(aad));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString('utf8');
}

// The 43-character base64 form of the key is covered by the unit tests (test/unit/webhooks.test.ts).
describe('with WEBHOOK_SECRET_ENCRYPTION_KEY as 64 hex characters', () => {
  const key = randomBytes(32);
  const signingKey = randomBytes(32);
  const givenSecret = `given-secret-${uniqueId('s')}`;
  let dataDir: string;
  let local: LocalProcess | undefined;
  let receiver: WebhookReceiver;
  let generatedSecret: string;
  const ids: Record<'given' | 'generated', string> = { given: '', generated: '' };
  let verified: { status: number; body: any };
  let delivered: ReceivedRequest;
  let exitCode: number | null;
  let stored: StoredWebhook[];
  let storedPush: Record<string, any>[];
  let vapidPublicKey: string;
  let storedBridge: Record<string, any>;
  let storedPusherApp: Record<string, any>;
  let pusherApp: { appId: string; key: string; secret: string };
  let pusherAuth: { auth: string; channel_data: string };
  const bridgeTokens = { hsToken: `hs-${randomBytes(8).toString('hex')}`, asToken: `as-${randomBytes(8).toString('hex')}` };
  const pushKeys = {
    fcmServerKey: `fcm-legacy-${randomBytes(8).toString('hex')}`,
    serviceAccount: JSON.stringify({
      client_email: 'sender@sealed.iam.gserviceaccount.com',
      private_key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    }),
    apnsPrivateKey: generateKeyPairSync('ec', { namedCurve: 'prime256v1' }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };

  beforeAll(async () => {
    // Prepare: a runtime on a data folder, with the key.
    dataDir = mkdtempSync(join(tmpdir(), 'webhook-secrets-'));
    receiver = await startWebhookReceiver({ secret: givenSecret });
    local = await startLocalProcess({
      env: {
        CHAT_DATA_DIR: dataDir,
        WEBHOOK_SECRET_ENCRYPTION_KEY: key.toString('hex'),
        SIGNING_SECRET_ENCRYPTION_KEY: signingKey.toString('hex'),
        WEBHOOK_RETRY_TIME_SCALE: '0.0005',
        WEBHOOK_TIMEOUT_MS: '300',
      },
    });
    const call = clientOf(local.baseUrl);

    // Act: register with a given and a generated secret, use the stored secret twice, stop.
    const given = await call('/webhooks/register', {
      apiKey: local.apiKey,
      body: { url: receiver.url, eventTypes: ['message.created'], secret: givenSecret },
    });
    const generated = await call('/webhooks/register', {
      apiKey: local.apiKey,
      body: { url: 'https://hooks.example.com/x', eventTypes: ['mention'] },
    });
    ids.given = given.body.id;
    ids.generated = generated.body.id;
    generatedSecret = generated.body.secret;
    verified = await call('/webhooks/verify', {
      body: { webhookId: ids.generated, body: '{"probe":true}', signature: hmacSha256Hex(generatedSecret, '{"probe":true}') },
    });
    const token = (await call('/auth/token', { apiKey: local.apiKey, body: { userId: 'alice' } })).body.token;
    await call('/rooms', { token, body: { id: 'secrets-room', type: 'group' } });
    await call('/messages', { token, body: { roomId: 'secrets-room', content: 'signed with a sealed secret' } });
    [delivered] = (await receiver.waitForRequests(1)) as [ReceivedRequest];
    // Push provider keys are sealed under the same key, the VAPID private key under the signing key.
    await call('/push/config', {
      method: 'PUT',
      apiKey: local.apiKey,
      body: {
        fcmServerKey: pushKeys.fcmServerKey,
        fcmProjectId: 'sealed-project',
        fcmServiceAccountJson: pushKeys.serviceAccount,
        apnsBundleId: 'com.example.sealed',
        apnsKeyId: 'KEY1234567',
        apnsTeamId: 'TEAM123456',
        apnsPrivateKey: pushKeys.apnsPrivateKey,
      },
    });
    vapidPublicKey = (await call('/push/web/vapid-public-key?projectId=demo')).body.publicKey;
    // A bridge's tokens are sealed under the same key, each bound to its bridge and field.
    await call('/admin/bridges', {
      apiKey: local.apiKey,
      body: {
        platform: 'matrix',
        roomId: 'secrets-room',
        ...bridgeTokens,
        homeserverUrl: 'https://matrix.example.org',
        matrixRoomId: '!sealed:example.org',
      },
    });
    // The Pusher app's secret is sealed under the same key, bound to the project and the app id;
    // a channel auth signed with it shows the service opens what it sealed.
    pusherApp = (await call('/admin/pusher-app', { method: 'POST', apiKey: local.apiKey, body: {} })).body;
    pusherAuth = (await call('/auth/channel', { token, body: { socket_id: '12.34', channel_name: 'private-room-secrets-room' } })).body;
    exitCode = await local.stop();
    local = undefined;

    // Read what is on disk.
    const dynamo = await startDynamoDbLocal({ dataDir });
    const client = DynamoDBDocumentClient.from(
      new DynamoDBClient({
        endpoint: dynamo.endpoint,
        region: 'us-east-1',
        credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
      }),
    );
    try {
      const { Items = [] } = await client.send(
        new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': DEMO_WEBHOOKS_PK } }),
      );
      stored = Items as StoredWebhook[];
      const push = await client.send(
        new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'P#demo#PUSHCFG' } }),
      );
      storedPush = push.Items ?? [];
      const bridges = await client.send(
        new QueryCommand({ TableName: TABLE, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': 'P#demo#BRIDGES' } }),
      );
      storedBridge = bridges.Items?.[0] ?? {};
      const pusher = await client.send(
        new QueryCommand({
          TableName: TABLE,
          KeyConditionExpression: 'pk = :pk AND sk = :sk',
          ExpressionAttributeValues: { ':pk': 'P#demo', ':sk': 'PUSHER_APP' },
        }),
      );
      storedPusherApp = pusher.Items?.[0] ?? {};
    } finally {
      client.destroy();
      await dynamo.stop();
    }
  }, 60_000);
  afterAll(async () => {
    await local?.stop();
    await receiver?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  it('registers both webhooks and stops cleanly', () => {
    // Assess
    expect(ids.given).toMatch(/^wh_demo_/);
    expect(ids.generated).toMatch(/^wh_demo_/);
    expect(generatedSecret).toMatch(/^[0-9a-f]{64}$/);
    expect(exitCode).toBe(0);
    expect(stored.map((item) => item.webhookId).sort()).toEqual([ids.given, ids.generated].sort());
  });

  it.each(['given', 'generated'] as const)(
    'stores the %s secret as base64 ciphertext and a 12-byte IV, with no secret attribute',
    (which) => {
      // Prepare
      const item = stored.find((candidate) => candidate.webhookId === ids[which])!;

      // Assess
      expect(item).not.toHaveProperty('secret');
      expect(item.secretCiphertext).toMatch(/^[A-Za-z0-9+/]+=*$/);
      expect(Buffer.from(item.secretIv ?? '', 'base64')).toHaveLength(12);
    },
  );

  it.each(['given', 'generated'] as const)('has the %s secret nowhere in the stored item', (which) => {
    // Prepare
    const secret = which === 'given' ? givenSecret : generatedSecret;
    const item = stored.find((candidate) => candidate.webhookId === ids[which])!;

    // Assess
    expect(JSON.stringify(item)).not.toContain(secret);
    expect(JSON.stringify(item)).not.toContain(Buffer.from(secret).toString('base64'));
  });

  it.each(['given', 'generated'] as const)('opens the %s secret with AES-256-GCM and the configured key', (which) => {
    // Prepare
    const item = stored.find((candidate) => candidate.webhookId === ids[which])!;

    // Act
    const opened = decrypt(key, item, `webhook-secret|demo|${item.webhookId}`);

    // Assess
    expect(opened).toBe(which === 'given' ? givenSecret : generatedSecret);
    expect(() => decrypt(randomBytes(32), item, `webhook-secret|demo|${item.webhookId}`)).toThrow();
  });

  it("stores a bridge's tokens sealed, each opening only as its own bridge's field", () => {
    // Prepare
    const aadOf = (field: string) => `bridge-secret|demo|${storedBridge.bridgeId}#${field}`;

    // Assess
    expect(JSON.stringify(storedBridge)).not.toContain(bridgeTokens.hsToken);
    expect(JSON.stringify(storedBridge)).not.toContain(bridgeTokens.asToken);
    expect(decrypt(key, storedBridge.secrets.hsToken, aadOf('hsToken'))).toBe(bridgeTokens.hsToken);
    expect(decrypt(key, storedBridge.secrets.asToken, aadOf('asToken'))).toBe(bridgeTokens.asToken);
    // Copied onto the other field (or another bridge), the value does not open.
    expect(() => decrypt(key, storedBridge.secrets.hsToken, aadOf('asToken'))).toThrow();
  });

  it("stores the Pusher app's secret sealed, bound to the project and the app id, and signs channel auths with it", () => {
    // Prepare
    const aad = `pusher-secret|demo|${pusherApp.appId}`;
    const signed = `12.34:private-room-secrets-room:${pusherAuth.channel_data}`;

    // Assess
    expect(JSON.stringify(storedPusherApp)).not.toContain(pusherApp.secret);
    expect(decrypt(key, storedPusherApp.sealedSecret, aad)).toBe(pusherApp.secret);
    expect(() => decrypt(key, storedPusherApp.sealedSecret, `pusher-secret|other|${pusherApp.appId}`)).toThrow();
    expect(pusherAuth.auth).toBe(`${pusherApp.key}:${hmacSha256Hex(pusherApp.secret, signed)}`);
  });

  it('uses a fresh IV for each registration', () => {
    // Assess
    expect(new Set(stored.map((item) => item.secretIv)).size).toBe(stored.length);
  });

  it('still verifies signatures and signs deliveries with the decrypted secret', () => {
    // Assess
    expect(verified).toMatchObject({ status: 200, body: { valid: true } });
    expect(delivered.headers['x-service-delivery-id']).toMatch(/^whd_/);
    expect(delivered.signatureValid).toBe(true);
  });

  it('seals the push configuration keys (each bound to its field) and the VAPID private key (under the signing key), and stores none of them in plain', () => {
    // Prepare
    const config = storedPush.find((item) => item.sk === 'ENV#production');
    const vapid = storedPush.find((item) => item.sk === 'VAPID');
    const open = (sealed: StoredWebhook, field: string) => decrypt(key, sealed, `push-key|demo|production#${field}`);
    const vapidPrivateKey = decrypt(signingKey, vapid?.privateKey, 'vapid-private-key|demo|VAPID');

    // Assess
    expect(open(config?.fcmServerKey, 'fcmServerKey')).toBe(pushKeys.fcmServerKey);
    expect(open(config?.fcmServiceAccount, 'fcmServiceAccount')).toBe(pushKeys.serviceAccount);
    expect(open(config?.apnsPrivateKey, 'apnsPrivateKey')).toBe(pushKeys.apnsPrivateKey);
    expect(() => open(config?.apnsPrivateKey, 'fcmServerKey')).toThrow();
    expect(vapid?.publicKey).toBe(vapidPublicKey);
    expect(Buffer.from(vapidPrivateKey, 'base64url')).toHaveLength(32);
    const text = JSON.stringify(storedPush);
    for (const plain of [pushKeys.fcmServerKey, 'PRIVATE KEY', 'client_email', vapidPrivateKey]) expect(text).not.toContain(plain);
  });
});

describe('without WEBHOOK_SECRET_ENCRYPTION_KEY (the shared runtime)', () => {
  it('stores the secret in plaintext, as the spec says', async () => {
    // Prepare
    const project = await createTestProject('webhook-plain');
    const secret = `plain-secret-${uniqueId('s')}`;

    // Act
    const registered = await api('/webhooks/register', {
      apiKey: project.apiKey,
      body: { url: 'https://hooks.example.com/p', eventTypes: ['mention'], secret },
    });
    const items = await partition(`P#${project.projectId}#WEBHOOKS`);

    // Assess
    expect(registered.status).toBe(201);
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ webhookId: registered.body.id, secret });
    expect(items[0]).not.toHaveProperty('secretCiphertext');
  });
});

// Every malformed form is covered by the unit tests of the config; one start proves the process refuses it.
describe('a runtime with a malformed WEBHOOK_SECRET_ENCRYPTION_KEY', () => {
  it('does not start: exit code 1 and a message naming the setting', async () => {
    // Act
    const failure = await startLocalProcess({ args: ['--in-memory'], env: { WEBHOOK_SECRET_ENCRYPTION_KEY: 'abc' } }).then(
      async (started) => {
        await started.stop();
        return new Error('the runtime started');
      },
      (error: Error) => error,
    );

    // Assess
    expect(failure.message).toMatch(/exited with 1/);
    expect(failure.message).toMatch(/WEBHOOK_SECRET_ENCRYPTION_KEY/);
    expect(failure.message).not.toMatch(/API key:/);
  }, 60_000);
});
