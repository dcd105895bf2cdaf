import { GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
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

/**
 * The project's minutes from `fromMinute` to `toMinute` (both included) that hold any figure, oldest
 * first; with `only`, just those counters (a day's series without its latency buckets reads half the bytes).
 */
export async function minutesBetween(
  projectId: string,
  fromMinute: number,
  toMinute: number,
  only?: readonly string[],
): Promise<MinuteCounters[]> {
  const projected = only ? ['minute', ...only] : undefined;
  const items = await queryAll({
    KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
    ExpressionAttributeValues: { ':pk': statsPk(projectId), ':from': minuteSk(fromMinute), ':to': minuteSk(toMinute) },
    ...(projected
      ? {
          ProjectionExpression: projected.map((_, index) => `#p${index}`).join(', '),
          ExpressionAttributeNames: Object.fromEntries(projected.map((name, index) => [`#p${index}`, name])),
        }
      : {}),
  });
  return items.map((item) => {
    const counters: Record<string, number> = {};
    for (const [name, value] of Object.entries(item)) if (!RESERVED.has(name) && typeof value === 'number') counters[name] = value;
    return { minute: Number(item.minute), counters };
  });
}

/** The project's objectives item, beside its minutes (its sort key sorts after every `M#`, outside their ranges). */
const OBJECTIVES_SK = 'OBJECTIVES';

export interface StoredObjectives {
  readonly availability: number;
  readonly latencyP95Ms: number;
  readonly updatedAt: string;
  readonly updatedBy: string;
}

/** The project's own objectives, or `undefined` while it keeps the settings' defaults. */
export async function readObjectives(projectId: string): Promise<StoredObjectives | undefined> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: { pk: statsPk(projectId), sk: OBJECTIVES_SK } }));
  if (!Item) return undefined;
  return {
    availability: Number(Item.availability),
    latencyP95Ms: Number(Item.latencyP95Ms),
    updatedAt: String(Item.updatedAt),
    updatedBy: String(Item.updatedBy),
  };
}

export async function writeObjectives(projectId: string, objectives: StoredObjectives): Promise<void> {
  await db.send(new PutCommand({ TableName: tableName, Item: { pk: statsPk(projectId), sk: OBJECTIVES_SK, ...objectives } }));
}
