/**
 * Load-generator child process of figure 2, started by bench/throughput.ts with
 * `node --import tsx`. It runs the closed-loop senders of both workloads (POST /messages over HTTP
 * and raw PutItem) so that their CPU stays out of the process that hosts the service, as it does
 * on AWS, where clients never share a Lambda's process. It reports latencies, failures, its own
 * CPU time and event-loop utilization per measured window over the IPC channel.
 */
import { performance } from 'node:perf_hooks';
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { Api, MESSAGE_CONTENT } from './client';
import {
  type FromGenerator,
  type GeneratorWindow,
  type LoadTarget,
  messageLikeItem,
  runUntil,
  type ToGenerator,
  type Workload,
} from './load';

const reply = (message: FromGenerator) => process.send?.(message);

let ops: Record<Workload, (sender: number) => Promise<boolean>> | undefined;
let raw: DynamoDBClient | undefined;

function configure(target: LoadTarget) {
  const api = new Api(target.baseUrl);
  raw = new DynamoDBClient({
    endpoint: target.dynamoEndpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
  });
  const client = raw;
  let rawSeq = 0;
  const rawBase = Date.now() * 1000;
  ops = {
    async messages(sender) {
      const result = await api.request('/messages', {
        token: target.tokens[sender],
        body: { roomId: target.roomId, content: MESSAGE_CONTENT },
      });
      return result.status === 201;
    },
    async rawPutItem() {
      await client.send(
        new PutItemCommand({ TableName: target.tableName, Item: messageLikeItem('bench-raw', 'raw-room', 'sender-0', rawBase + rawSeq++) }),
      );
      return true;
    },
  };
}

async function measure(op: (sender: number) => Promise<boolean>, concurrency: number, ms: number): Promise<GeneratorWindow> {
  const latencies: number[] = [];
  const failures = { count: 0 };
  const cpuBefore = process.cpuUsage();
  const eluBefore = performance.eventLoopUtilization();
  const started = performance.now();
  await runUntil(concurrency, started + ms, op, latencies, failures);
  const elapsedMs = performance.now() - started;
  const cpu = process.cpuUsage(cpuBefore);
  const elu = performance.eventLoopUtilization(eluBefore);
  return {
    latencies,
    failures: failures.count,
    elapsedMs,
    cpuMs: (cpu.user + cpu.system) / 1000,
    eluActive: elu.active,
    eluIdle: elu.idle,
  };
}

async function handle(message: ToGenerator): Promise<void> {
  if (message.type === 'configure') {
    configure(message.target);
    reply({ type: 'configured' });
    return;
  }
  if (message.type === 'exit') {
    raw?.destroy();
    process.disconnect?.();
    return;
  }
  if (!ops) throw new Error('load generator: not configured');
  const op = ops[message.workload];
  if (message.type === 'warm') {
    await runUntil(message.concurrency, performance.now() + message.ms, op);
    reply({ type: 'warmed' });
  } else {
    reply({ type: 'measured', window: await measure(op, message.concurrency, message.ms) });
  }
}

process.on('message', (message: ToGenerator) => {
  handle(message).catch((error: unknown) => reply({ type: 'failed', error: error instanceof Error ? error.message : String(error) }));
});
// The bench process is gone (finished, or killed): nothing is left to measure for.
process.on('disconnect', () => {
  raw?.destroy();
  process.exit(0);
});
