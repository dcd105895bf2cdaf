import { createECDH, randomBytes } from 'node:crypto';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { PUSH_RECORD_TTL_SECONDS, pushRecordKey } from '#shared/db/push-record';
import { raw, table } from '../raw-table';

/**
 * Push inputs for the suites that exercise the push routes on the shared runtime: tokens and
 * browser subscriptions as real clients make them, and push records as the sender writes them
 * (the shared runtime's pushes go nowhere a test can read back, so acknowledgement tests seed one).
 */

/** An FCM registration token of the real alphabet, new on every call. */
export const fcmToken = () => `fcm:${randomBytes(24).toString('hex')}`;

/** A browser's subscription keys: an uncompressed P-256 point (0x04 first, 65 bytes) and a 16-byte auth secret. */
export function subscriptionKeys() {
  const ecdh = createECDH('prime256v1');
  ecdh.generateKeys();
  return { p256dh: ecdh.getPublicKey('base64url'), auth: randomBytes(16).toString('base64url') };
}

/**
 * A fresh endpoint on a public-looking host: the shared runtime allows private targets, so a
 * loopback endpoint would prove nothing about the SSRF guard's refusals.
 */
export const pushEndpoint = (host = 'push.example.com') => `https://${host}/sub/${randomBytes(12).toString('hex')}`;

/** A whole browser subscription as `PushManager.subscribe` gives it. */
export const newSubscription = (host?: string) => ({ endpoint: pushEndpoint(host), keys: subscriptionKeys() });

/** A push the sender sent to `userId`, as it stores one; returns its id and key. */
export async function seedPushRecord(projectId: string, userId: string, pushId = `push_${randomBytes(16).toString('hex')}`) {
  const key = pushRecordKey(projectId, pushId);
  await raw.send(
    new PutCommand({
      TableName: table(),
      Item: {
        ...key,
        pushId,
        userId,
        channel: 'web',
        targetId: 'ws_x',
        roomId: 'r',
        messageId: 1,
        status: 'sent',
        sentAt: new Date().toISOString(),
        ttl: Math.floor(Date.now() / 1000) + PUSH_RECORD_TTL_SECONDS,
      },
    }),
  );
  return { pushId, key };
}
