import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { db, tableName } from './client';
import { projectPk } from './keys';
import { queryAll } from './query';

/**
 * A project's figures of one minute: counters by name (requests, errors by class, latency buckets,
 * messages, connections, deliveries...), each added to by the stats aggregator with one `ADD` per
 * project-minute per batch, never per request; gone by TTL after `STATS_RETENTION_DAYS`. All of a
 * project's minutes share one partition, written a few times a minute at most.
 */
const statsPk = (projectId: string) => `${projectPk(projectId)}#STATS`;
/** Minutes since the epoch, zero-padded so lexical order is time order. */
const minuteSk = (minute: number) => `M#${String(minute).padStart(10, '0')}`;

const RESERVED = new Set(['pk', 'sk', 'ttl', 'minute']);

/** Adds `counters` to the project-minute's item in one `UpdateItem` (no read), creating it with its TTL. */
export async function addToMinute(
  projectId: string,
  minute: number,
  counters: Readonly<Record<string, number>>,
  ttl: number,
): Promise<void> {
  const entries = Object.entries(counters).filter(([name, value]) => !RESERVED.has(name) && value !== 0);
  if (entries.length === 0) return;
  const names: Record<string, string> = { '#ttl': 'ttl', '#minute': 'minute' };
  const values: Record<string, unknown> = { ':ttl': ttl, ':minute': minute };
  const adds = entries.map(([name, value], index) => {
    names[`#c${index}`] = name;
    values[`:c${index}`] = value;
    return `#c${index} :c${index}`;
  });
  await db.send(
    new UpdateCommand({
      TableName: tableName,
      Key: { pk: statsPk(projectId), sk: minuteSk(minute) },
      UpdateExpression: `ADD ${adds.join(', ')} SET #ttl = if_not_exists(#ttl, :ttl), #minute = :minute`,
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: values,
    }),
  );
}

export interface MinuteCounters {
  readonly minute: number;
  readonly counters: Readonly<Record<string, number>>;
}

/** The project's minutes from `fromMinute` to `toMinute` (both included) that hold any figure, oldest first. */
export async function minutesBetween(projectId: string, fromMinute: number, toMinute: number): Promise<MinuteCounters[]> {
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': statsPk(projectId), ':from': minuteSk(fromMinute), ':to': minuteSk(toMinute) },
  });
  return items.map((item) => {
    const counters: Record<string, number> = {};
    for (const [name, value] of Object.entries(item)) if (!RESERVED.has(name) && typeof value === 'number') counters[name] = value;
    return { minute: Number(item.minute), counters };
  });
}
