import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { httpHandler } from '#edge/http';
import { db, tableName } from '#shared/db/client';

async function probe(check: () => Promise<unknown>) {
  const started = performance.now();
  try {
    await check();
    return { status: 'ok' as const, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    return { status: 'down' as const, latencyMs: Math.round(performance.now() - started), error: (error as Error).name };
  }
}

/**
 * 200 while the table answers, 503 otherwise, so load balancers and monitors can use it as is. The
 * table is the one dependency every request needs; nothing on the request path waits for a queue
 * or the event topic any more, and a public route holds no grant on them.
 */
export const handler = httpHandler('GetHealth', {}, async () => {
  const dynamodb = await probe(() => db.send(new GetCommand({ TableName: tableName, Key: { pk: 'HEALTH', sk: 'HEALTH' } })));
  const healthy = dynamodb.status === 'ok';
  return {
    status: healthy ? 200 : 503,
    body: { status: healthy ? 'ok' : 'degraded', time: new Date().toISOString(), dependencies: { dynamodb } },
  };
});
