/**
 * The closed-loop load of figure 2 and the protocol between the bench process (which hosts the
 * service) and the load-generator child process (bench/load-generator.ts) that produces the load.
 * Nothing here starts anything: both sides import it.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { MESSAGE_CONTENT } from './client';

/** `messages`: POST /messages over HTTP to the service; `rawPutItem`: PutItem straight to DynamoDB Local. */
export type Workload = 'messages' | 'rawPutItem';

/** What the load generator needs to reach the service and DynamoDB Local. */
export interface LoadTarget {
  readonly baseUrl: string;
  /** One bearer token per sender, each its own user. */
  readonly tokens: readonly string[];
  readonly roomId: string;
  readonly dynamoEndpoint: string;
  readonly tableName: string;
}

export type ToGenerator =
  | { readonly type: 'configure'; readonly target: LoadTarget }
  /** Unmeasured load until the deadline, then wait for every call in flight; answered by `warmed`. */
  | { readonly type: 'warm'; readonly workload: Workload; readonly concurrency: number; readonly ms: number }
  /** A measured window, opened right away; answered by `measured`. */
  | { readonly type: 'measure'; readonly workload: Workload; readonly concurrency: number; readonly ms: number }
  | { readonly type: 'exit' };

/** One measured window as the load generator saw it. */
export interface GeneratorWindow {
  readonly latencies: number[];
  readonly failures: number;
  /** From the first call started to the last call returned. */
  readonly elapsedMs: number;
  /** The load generator's own process CPU (all its threads) during the window. */
  readonly cpuMs: number;
  readonly eluActive: number;
  readonly eluIdle: number;
}

export type FromGenerator =
  | { readonly type: 'configured' }
  | { readonly type: 'warmed' }
  | { readonly type: 'measured'; readonly window: GeneratorWindow }
  | { readonly type: 'failed'; readonly error: string };

/** Keeps `concurrency` senders calling `op` until `deadline`; latencies and failures of every call are kept if asked. */
export async function runUntil(
  concurrency: number,
  deadline: number,
  op: (sender: number) => Promise<boolean>,
  latencies?: number[],
  failures?: { count: number },
): Promise<void> {
  await Promise.all(
    Array.from({ length: concurrency }, async (_, sender) => {
      while (performance.now() < deadline) {
        const started = performance.now();
        let ok = false;
        try {
          ok = await op(sender);
        } catch {
          ok = false;
        }
        if (!ok && failures) failures.count++;
        latencies?.push(performance.now() - started);
      }
    }),
  );
}

/** A stored message item as `functions/shared/db/message.ts` writes it, marshalled. */
export function messageLikeItem(projectId: string, roomId: string, userId: string, id: number): Record<string, AttributeValue> {
  return {
    pk: { S: `P#${projectId}#R#${roomId}#MSGS` },
    sk: { S: `MSG#${String(id).padStart(16, '0')}` },
    id: { N: String(id) },
    projectId: { S: projectId },
    roomId: { S: roomId },
    userId: { S: userId },
    content: { S: MESSAGE_CONTENT },
    parent_id: { NULL: true },
    attachments: { L: [] },
    clientMessageId: { NULL: true },
    createdAt: { S: new Date(Math.floor(id / 1000)).toISOString() },
    moderation: { NULL: true },
  };
}
