import { generateKeyPairSync, randomBytes } from 'node:crypto';
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { createProject } from '#domain/projects/projects';
import { putPushConfig, sendingConfig } from '#domain/push/config';
import { dispatchMessagePush } from '#domain/push/dispatch';
import { registerDevice } from '#domain/push/targets';
import { createRoom } from '#domain/rooms/rooms';
import type { UserPrincipal } from '#shared/auth';
import { config } from '#shared/config';
import { pushConfigKey } from '#shared/db/push-config';
import type { DomainEvent } from '#shared/events';
import { uniqueId } from '../support/api';
import { get, raw, table } from '../support/raw-table';

/** A project's push configuration as the dispatcher and the sender open it, in DynamoDB Local. */

const serviceAccountJson = JSON.stringify({
  type: 'service_account',
  project_id: 'chat-push-tests',
  client_email: 'sender@chat-push-tests.iam.gserviceaccount.com',
  private_key: generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
});

async function projectWithReader() {
  const projectId = (await createProject({ name: 'push config', projectId: uniqueId('int').toLowerCase() })).projectId;
  const author: UserPrincipal = { kind: 'user', projectId, userId: uniqueId('author'), roles: ['member'] };
  const readerId = uniqueId('reader');
  const { room } = await createRoom(author, { type: 'group', members: [readerId] });
  return { projectId, authorId: author.userId, readerId, roomId: room.id };
}

const messageCreated = (projectId: string, roomId: string, userId: string): DomainEvent<'message.created'> => {
  const createdAt = new Date().toISOString();
  return {
    id: uniqueId('evt'),
    type: 'message.created',
    projectId,
    createdAt,
    payload: { roomId, messageId: 1, userId, content: 'hello', parent_id: null, attachments: [], createdAt },
  };
};

describe('a push configuration whose keys cannot be opened', () => {
  it('stops mobile pushes only: the row keeps its web push switch and the dispatcher still plans the message', async () => {
    // Prepare
    const { projectId, authorId, readerId, roomId } = await projectWithReader();
    await putPushConfig(projectId, {
      environment: config.PUSH_ENVIRONMENT,
      fcmProjectId: 'chat-push-tests',
      fcmServiceAccountJson: serviceAccountJson,
      webPushEnabled: false,
    });
    const key = pushConfigKey(projectId, config.PUSH_ENVIRONMENT);
    expect((await get(key.pk, key.sk))?.fcmServiceAccount).toBeDefined();
    // What a lost or rotated sealing key leaves: a ciphertext that no longer opens.
    const undecryptable = { secretCiphertext: randomBytes(48).toString('base64'), secretIv: randomBytes(12).toString('base64') };
    await raw.send(
      new UpdateCommand({
        TableName: table(),
        Key: key,
        UpdateExpression: 'SET fcmServiceAccount = :sealed',
        ExpressionAttributeValues: { ':sealed': undecryptable },
      }),
    );
    await registerDevice(projectId, readerId, { platform: 'android', token: `fcm-${randomBytes(16).toString('hex')}` });

    // Act
    const opened = await sendingConfig(projectId);
    const dispatched = await dispatchMessagePush(messageCreated(projectId, roomId, authorId));

    // Assess
    expect(opened).toEqual({ webPushEnabled: false });
    expect(dispatched).toEqual({ deliveries: 1, queuedBatches: 0 });
  });
});
