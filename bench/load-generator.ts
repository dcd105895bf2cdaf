/**
 * Load-generator child process of section 2, forked by bench/throughput.ts. It runs the closed-loop
 * senders of both workloads (POST /messages over HTTP, and the raw DynamoDB requests a message
 * makes, issued back to back) so that their CPU stays out of
 * the process that hosts the service, as it does on AWS, where clients never share a Lambda's
 * process, and reports latencies, failures, its own CPU time and event-loop use per window.
 */
import { performance } from 'node:perf_hooks';
import { type AttributeValue, DynamoDBClient, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { itemSize } from './instrument';
import { Api, localAws, MESSAGE_CONTENT, runUntil, serveIpc } from './util';

/**
 * `messages`: POST /messages over HTTP to the service; `raw`: the three requests a plain message
 * makes (its rate-limit window's UpdateItem, the message's PutItem, the Query of the room's
 * connections), issued back to back straight to DynamoDB Local with the SDK.
 */
export type Workload = 'messages' | 'raw';

/** A stored message item as `functions/shared/db/message.ts` writes it, marshalled. */
const messageLikeItem = (projectId: string, roomId: string, id: number): Record<string, AttributeValue> => ({
  pk: { S: `P#${projectId}#R#${roomId}#MSGS` },
  sk: { S: `MSG#${String(id).padStart(16, '0')}` },
  id: { N: String(id) },
  projectId: { S: projectId },
  roomId: { S: roomId },
  userId: { S: 'sender-0' },
  content: { S: MESSAGE_CONTENT },
  parent_id: { NULL: true },
  attachments: { L: [] },
  clientMessageId: { NULL: true },
  createdAt: { S: new Date(Math.floor(id / 1000)).toISOString() },
  moderation: { NULL: true },
});

let ops: Record<Workload, (sender: number) => Promise<boolean>> | undefined;
let raw: DynamoDBClient | undefined;
const op = (workload: Workload) => {
  if (!ops) throw new Error('load generator: not configured');
  return ops[workload];
};

const methods = {
  /** Points the senders at the service (one token per sender, each its own user) and DynamoDB Local; answers the item sizes. */
  async configure(target: {
    baseUrl: string;
    projectId: string;
    tokens: readonly string[];
    roomId: string;
    dynamoEndpoint: string;
    tableName: string;
  }) {
    const api = new Api(target.baseUrl);
    const client = new DynamoDBClient(localAws(target.dynamoEndpoint));
    raw = client;
    let rawSeq = Date.now() * 1000;
    const body = { roomId: target.roomId, content: MESSAGE_CONTENT };
    ops = {
      messages: async (sender) => (await api.request('/messages', { token: target.tokens[sender], body })).status === 201,
      raw: async (sender) => {
        const window = Math.floor(Date.now() / 60_000);
        await client.send(
          new UpdateItemCommand({
            TableName: target.tableName,
            Key: { pk: { S: `P#bench-raw#RL#messages#user:sender-${sender}` }, sk: { S: `W#${window}` } },
            UpdateExpression: 'ADD #count :one SET #ttl = if_not_exists(#ttl, :ttl)',
            ExpressionAttributeNames: { '#count': 'count', '#ttl': 'ttl' },
            ExpressionAttributeValues: { ':one': { N: '1' }, ':ttl': { N: String((window + 2) * 60) } },
            ReturnValues: 'UPDATED_NEW',
          }),
        );
        await client.send(new PutItemCommand({ TableName: target.tableName, Item: messageLikeItem('bench-raw', 'raw-room', rawSeq++) }));
        await client.send(
          new QueryCommand({
            TableName: target.tableName,
            KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
            ExpressionAttributeValues: { ':pk': { S: 'P#bench-raw#R#raw-room' }, ':prefix': { S: 'C#' } },
          }),
        );
        return true;
      },
    };
    /** Item sizes (DynamoDB rules) of a stored message and of the raw workload's message item. */
    return {
      message: itemSize(messageLikeItem(target.projectId, target.roomId, rawSeq)),
      raw: itemSize(messageLikeItem('bench-raw', 'raw-room', rawSeq)),
    };
  },

  /** Unmeasured load until the time is up, then waits for every call in flight. */
  async warm(workload: Workload, concurrency: number, ms: number) {
    await runUntil(concurrency, performance.now() + ms, op(workload));
  },

  /** A measured window, opened right away: elapsed is first call started to last call returned; CPU is this process's, all threads. */
  async measure(workload: Workload, concurrency: number, ms: number) {
    const cpuBefore = process.cpuUsage();
    const eluBefore = performance.eventLoopUtilization();
    const started = performance.now();
    const latencies: number[] = [];
    const failures = await runUntil(concurrency, started + ms, op(workload), latencies);
    const elapsedMs = performance.now() - started;
    const cpu = process.cpuUsage(cpuBefore);
    const elu = performance.eventLoopUtilization(eluBefore);
    return { latencies, failures, elapsedMs, cpuMs: (cpu.user + cpu.system) / 1000, eluActive: elu.active, eluIdle: elu.idle };
  },
};

export type LoadGenerator = typeof methods;

serveIpc(methods, () => raw?.destroy());
