import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import * as z from '#shared/schema';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { queryAll } from './query';

/**
 * Client-measured voice AI latencies, aggregated as they arrive: one item per project, kind and
 * minute holding a fixed histogram (an attribute `b<index>` per bucket with samples, counted with
 * ADD) and the sample count. A batch of samples costs one write per (kind, minute) it touches,
 * whatever its size; a window's statistics are one Query over the window's minutes. The bucket
 * bounds are the domain's (`#domain/calls/voice-latency`); items expire with their TTL.
 */
export const VOICE_LATENCY_KINDS = ['realtime', 'chunked_rest', 'barge_in'] as const;
export type VoiceLatencyKind = (typeof VOICE_LATENCY_KINDS)[number];

export const voiceLatencyPk = (projectId: string) => `${projectPk(projectId)}#VOICE_LATENCY`;
/** `2026-11-27T08:15#realtime`: minutes sort in time order, so a window is one sort-key range. */
const minuteSk = (minute: string, kind: VoiceLatencyKind) => `${minute}#${kind}`;

const BUCKET_ATTRIBUTE = /^b(\d+)$/;

export interface LatencyHistogram {
  readonly kind: VoiceLatencyKind;
  readonly minute: string;
  readonly count: number;
  /** Samples per bucket index. */
  readonly buckets: ReadonlyMap<number, number>;
}

/** Adds samples (counts per bucket index) to the histogram of one kind and minute. */
export async function addLatencySamples(
  projectId: string,
  histogram: { kind: VoiceLatencyKind; minute: string; buckets: ReadonlyMap<number, number> },
  ttl: number,
): Promise<void> {
  const entries = [...histogram.buckets];
  const total = entries.reduce((sum, [, count]) => sum + count, 0);
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: { pk: voiceLatencyPk(projectId), sk: minuteSk(histogram.minute, histogram.kind) },
      UpdateExpression: `SET #kind = :kind, #minute = :minute, #ttl = :ttl ADD #samples :total, ${entries.map((_, i) => `#b${i} :b${i}`).join(', ')}`,
      // Every name through a placeholder: `kind`, `minute` and `ttl` are among DynamoDB's reserved words.
      ExpressionAttributeNames: {
        '#kind': 'kind',
        '#minute': 'minute',
        '#ttl': 'ttl',
        '#samples': 'samples',
        ...Object.fromEntries(entries.map(([index], i) => [`#b${i}`, `b${index}`])),
      },
      ExpressionAttributeValues: {
        ':kind': histogram.kind,
        ':minute': histogram.minute,
        ':ttl': ttl,
        ':total': total,
        ...Object.fromEntries(entries.map(([, count], i) => [`:b${i}`, count])),
      },
    }),
  );
}

const histogramItem = z.object({ kind: z.enum(VOICE_LATENCY_KINDS), minute: z.string(), samples: z.number() });

/** Every histogram of the project from minute `from` to minute `to`, both included. */
export async function latencyHistogramsBetween(projectId: string, from: string, to: string): Promise<LatencyHistogram[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    // `~` sorts after `#<kind>`: the last minute's every kind.
    ExpressionAttributeValues: { ':pk': voiceLatencyPk(projectId), ':from': from, ':to': `${to}~` },
  });
  return items.map((raw) => {
    const item = histogramItem.parse(raw);
    const buckets = new Map<number, number>();
    for (const [name, value] of Object.entries(raw)) {
      const match = BUCKET_ATTRIBUTE.exec(name);
      if (match && typeof value === 'number') buckets.set(Number(match[1]), value);
    }
    return { kind: item.kind, minute: item.minute, count: item.samples, buckets };
  });
}
