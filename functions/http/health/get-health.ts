import { GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { config } from '#shared/config';
import { db, tableName } from '#shared/db/client';
import { httpHandler } from '#shared/http';
import { sqs } from '#shared/queue';

async function probe(check: () => Promise<unknown>) {
  const started = performance.now();
  try {
    await check();
    return { status: 'ok' as const, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    return { status: 'down' as const, latencyMs: Math.round(performance.now() - started), error: (error as Error).name };
  }
}

/** 200 while every dependency answers, 503 otherwise, so load balancers and monitors can use it as is. */
export const handler = httpHandler('GetHealth', {}, async () => {
  const [dynamodb, eventsQueue] = await Promise.all([
    probe(() => db.send(new GetCommand({ TableName: tableName, Key: { pk: 'HEALTH', sk: 'HEALTH' } }))),
    probe(async () => {
      if (!config.EVENTS_QUEUE_URL) throw new Error('EVENTS_QUEUE_URL is not set');
      return sqs.send(new GetQueueAttributesCommand({ QueueUrl: config.EVENTS_QUEUE_URL, AttributeNames: ['QueueArn'] }));
    }),
  ]);
  const healthy = dynamodb.status === 'ok' && eventsQueue.status === 'ok';
  return {
    status: healthy ? 200 : 503,
    body: { status: healthy ? 'ok' : 'degraded', time: new Date().toISOString(), dependencies: { dynamodb, eventsQueue } },
  };
});
