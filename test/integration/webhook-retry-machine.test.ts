import { randomBytes } from 'node:crypto';
import { DescribeExecutionCommand, SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProject } from '#domain/projects/projects';
import { webhookKey } from '#shared/db/webhook';
import { deliveriesIndexKey, deliveryKey } from '#shared/db/webhook-delivery';
import { functionsDir, repoRoot } from '../../lib/constructs/chat-function.ts';
import { HandlerHost } from '../../lib/local/handlers.ts';
import { type LocalStepFunctions, startLocalStepFunctions } from '../../lib/local/step-functions.ts';
import { uniqueId } from '../support/api';
import { get, raw, table } from '../support/raw-table';

/**
 * The webhook retry state machine (lib/state-machines/webhook-retry.asl.json, the file CDK deploys)
 * in the local interpreter, its task running the real attempt worker against DynamoDB Local. An
 * attempt that throws (here: a registration whose stored secret cannot be opened, as after the
 * webhook key was replaced) is outside the retry schedule; the machine must not leave the delivery
 * `pending`, which nothing would ever attempt again and replay refuses, but mark it `failed`.
 */

let stepFunctions: LocalStepFunctions;
let sfn: SFNClient;
beforeAll(async () => {
  stepFunctions = await startLocalStepFunctions({ repoRoot, handlers: new HandlerHost(functionsDir) });
  sfn = new SFNClient({
    endpoint: stepFunctions.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
});
afterAll(async () => {
  sfn?.destroy();
  await stepFunctions?.stop();
});

/** A pending delivery of a registration whose sealed secret no key opens. */
async function deliveryOfUnopenableSecret(): Promise<{ projectId: string; deliveryId: string }> {
  const { projectId } = await createProject({ name: 'retry machine', projectId: uniqueId('int').toLowerCase() });
  const webhookId = `wh_${projectId}_${randomBytes(6).toString('hex')}`;
  const deliveryId = uniqueId('whd');
  const now = new Date().toISOString();
  await raw.send(
    new PutCommand({
      TableName: table(),
      Item: {
        ...webhookKey(projectId, webhookId),
        projectId,
        webhookId,
        url: 'http://127.0.0.1:9/hook',
        eventTypes: ['message.created'],
        secretCiphertext: randomBytes(48).toString('base64'),
        secretIv: randomBytes(12).toString('base64'),
        createdAt: now,
        createdBy: 'test',
      },
    }),
  );
  await raw.send(
    new PutCommand({
      TableName: table(),
      Item: {
        ...deliveryKey(projectId, deliveryId),
        gsi1pk: deliveriesIndexKey(projectId),
        gsi1sk: `${now}#${deliveryId}`,
        projectId,
        deliveryId,
        webhookId,
        eventType: 'message.created',
        body: JSON.stringify({ type: 'message.created', projectId, payload: {}, createdAt: now }),
        status: 'pending',
        attempt_count: 1,
        next_attempt_at: now,
        last_http_status: 500,
        last_error: 'HTTP 500',
        createdAt: now,
        updatedAt: now,
      },
    }),
  );
  return { projectId, deliveryId };
}

async function finished(executionArn: string) {
  for (let waited = 0; waited < 10_000; waited += 50) {
    const execution = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (execution.status !== 'RUNNING') return execution;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`execution ${executionArn} still running`);
}

describe('a retry execution whose attempt throws', () => {
  it('marks the delivery failed (replayable) with the error as last_error, and fails the execution', async () => {
    // Prepare
    const { projectId, deliveryId } = await deliveryOfUnopenableSecret();

    // Act
    const { executionArn } = await sfn.send(
      new StartExecutionCommand({
        stateMachineArn: stepFunctions.arns.WebhookRetry,
        input: JSON.stringify({ projectId, deliveryId, status: 'pending', nextAttemptAt: new Date().toISOString() }),
      }),
    );
    const execution = await finished(executionArn as string);

    // Assess
    expect(execution.status).toBe('FAILED');
    // The stand-in reports the Fail state's Cause (AWS: Error WebhookAttemptFailed with that Cause).
    expect(execution.error).toMatch(/the delivery is marked failed/);
    const delivery = await get(deliveryKey(projectId, deliveryId).pk, 'DELIVERY');
    expect(delivery).toMatchObject({ status: 'failed', attempt_count: 1, next_attempt_at: null });
    expect(delivery?.last_error).toMatch(/^the retry schedule stopped: \S+/);
  });

  it('leaves a delivery that is no longer pending as it is', async () => {
    // Prepare: the delivery was delivered (by a replay's attempt, say) while this execution ran
    const { projectId, deliveryId } = await deliveryOfUnopenableSecret();
    const { handler } = (await import('../../functions/workers/webhook-attempt.ts')) as {
      handler: (input: unknown, context: unknown) => Promise<unknown>;
    };
    const before = await get(deliveryKey(projectId, deliveryId).pk, 'DELIVERY');
    await raw.send(new PutCommand({ TableName: table(), Item: { ...before, status: 'delivered', last_error: null } }));

    // Act
    const answer = await handler({ projectId, deliveryId, giveUp: { Error: 'Sandbox.Timedout' } }, {});

    // Assess
    expect(answer).toEqual({ projectId, deliveryId, status: 'delivered', nextAttemptAt: null, traceId: expect.any(String) });
    expect(await get(deliveryKey(projectId, deliveryId).pk, 'DELIVERY')).toMatchObject({ status: 'delivered', last_error: null });
  });
});
