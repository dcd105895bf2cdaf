import { type AttributeValue, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';
import { StreamTail } from './stream-tail';

type Item = Record<string, AttributeValue>;

/** One item added, removed or changed between two looks at the table. */
export interface TableChange {
  readonly kind: 'added' | 'removed' | 'changed';
  readonly pk: string;
  readonly sk: string;
}

/**
 * Rate-limit windows (`<project>#RL#<bucket>#<key>` / `W#<window>`, `functions/domain/rate-limit`)
 * are counted before a request's input is validated, on purpose: a flood of bad requests must use
 * up the caller's budget too, or validation failures would be a free way around the limit. They
 * hold a counter and expire by TTL, so a refused request may create or bump one; that is the only
 * write a refusal may make.
 */
export const isRateLimitWindow = (change: TableChange) => /#RL#/.test(change.pk) && change.sk.startsWith('W#');

/**
 * A failed sign-in is a refusal (401) that must write: it counts towards the lockout of that user
 * id (`functions/shared/db/sign-in-failures.ts`), or guessing would be free.
 */
export const isSignInFailureRecord = (change: TableChange) => change.sk === 'SIGNIN_FAILURES';

/**
 * A 403 to an authenticated caller on a privileged route is audited as `denied` (docs/audit.md):
 * an append-only event in the project's audit partition, what a security team watches for.
 */
export const isDeniedAuditEvent = (change: TableChange) => change.kind === 'added' && change.pk.endsWith('#AUDIT');

/**
 * A project's per-minute figures (`P#<project>#STATS` / `M#<minute>`, `functions/shared/db/stats.ts`)
 * count refusals too (a 4xx is a figure), written by the stats aggregator off the request path a
 * moment later, so the watch may see any recent request's figures land during a refusal.
 */
export const isStatsMinute = (change: TableChange) => /#STATS$/.test(change.pk) && change.sk.startsWith('M#');

/** The alerts the aggregator opens and resolves from those figures (`P#<project>#ALERTS`), as moments later. */
export const isStatsAlert = (change: TableChange) => /#ALERTS$/.test(change.pk);

/** The writes a refusal may make: counters and records of what was refused. */
export const isRefusalCounter = (change: TableChange) =>
  isRateLimitWindow(change) || isSignInFailureRecord(change) || isDeniedAuditEvent(change) || isStatsMinute(change) || isStatsAlert(change);

const keyOf = (item: Item) => `${item.pk?.S ?? ''}\u0000${item.sk?.S ?? ''}`;

/** A scan's and a stream record's attribute values alike (the two SDK clients type them apart). */
type Value = Record<string, unknown>;

const base64 = (bytes: unknown) => Buffer.from(bytes as Uint8Array).toString('base64');

/**
 * Attribute order in a scan or a stream record is not guaranteed, nor the order of a set's
 * members; compare items by a canonical rendering.
 */
function canonicalItem(item: Record<string, unknown>): string {
  return `{${Object.keys(item)
    .sort()
    .map((name) => `${JSON.stringify(name)}:${canonicalValue(item[name] as Value)}`)
    .join(',')}}`;
}

function canonicalValue(value: Value): string {
  // DynamoDB Local writes an empty map as `{}` in stream records (as `lib/local/stream/lambda-records.ts` restores).
  if (value.M !== undefined || Object.keys(value).length === 0) return `{"M":${canonicalItem((value.M ?? {}) as Value)}}`;
  if (value.L !== undefined) return `{"L":[${(value.L as Value[]).map(canonicalValue).join(',')}]}`;
  if (value.B !== undefined) return `{"B":${JSON.stringify(base64(value.B))}}`;
  if (value.BS !== undefined) return `{"BS":${JSON.stringify((value.BS as unknown[]).map(base64).sort())}}`;
  if (value.SS !== undefined) return `{"SS":${JSON.stringify([...(value.SS as string[])].sort())}}`;
  if (value.NS !== undefined) return `{"NS":${JSON.stringify([...(value.NS as string[])].sort())}}`;
  return JSON.stringify(value);
}

const splitKey = (key: string) => {
  const [pk = '', sk = ''] = key.split('\u0000');
  return { pk, sk };
};

/**
 * Every item of a table, followed with clients of the test's own, compared before and after a
 * request: a refused request must leave the table as it was. Only meaningful on a runtime no other
 * suite writes to (the fuzz suite starts its own).
 *
 * The table is scanned once; from then on its state is kept up to date from the table's stream,
 * which DynamoDB Local writes with the write itself (a record is there when the write has answered),
 * so a check costs one read of what changed, not a scan of everything: a refusal is checked after
 * nearly every request. The stream's images are compared with the state kept, so a write that
 * leaves an item as it was is no change, as between two scans. {@link verify} scans again and holds
 * the state followed against it, so a record the stream reading missed fails the suite.
 */
export class TableWatch {
  /** Open to tests that set up table state the API cannot reach in time (a rate-limit window ahead). */
  readonly client: DynamoDBClient;
  /** The table as of the last read of the stream, by key. */
  private state: Map<string, string> | undefined;
  private tail: StreamTail | undefined;
  /** The state may lack writes of an accepted request: the next {@link ready} takes them in. */
  private behind = true;
  private scans = 0;
  private scanMs = 0;
  private streamMs = 0;

  constructor(
    private readonly endpoint: string,
    private readonly tableName: string,
  ) {
    this.client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  }

  /** What the watch cost, for the suite's summary. */
  summary(): string {
    const seconds = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
    return `${this.scans} table scans in ${seconds(this.scanMs)}, ${this.tail?.reads ?? 0} stream reads in ${seconds(this.streamMs)}, ${this.state?.size ?? 0} items at the end`;
  }

  private async timed<T>(spent: 'scanMs' | 'streamMs', work: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await work();
    } finally {
      this[spent] += performance.now() - started;
    }
  }

  private scan(): Promise<Map<string, string>> {
    return this.timed('scanMs', async () => {
      const items = new Map<string, string>();
      let start: Item | undefined;
      do {
        const page = await this.client.send(new ScanCommand({ TableName: this.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
        for (const item of page.Items ?? []) items.set(keyOf(item), canonicalItem(item));
        start = page.LastEvaluatedKey;
      } while (start);
      this.scans++;
      return items;
    });
  }

  /**
   * Brings the state up to date with the stream; what changed since the last time. On the first
   * call the tail opens at the stream's end before the scan, so a write between the two is read
   * again after it: records applied in order end at the item's latest image either way.
   */
  private async follow(): Promise<TableChange[]> {
    if (!this.tail || !this.state) {
      this.tail = await this.timed('streamMs', () => StreamTail.open(this.client, this.endpoint, this.tableName));
      this.state = await this.scan();
    }
    const state = this.state;
    const tail = this.tail;
    const records = await this.timed('streamMs', () => tail.read());
    const before = new Map<string, string | undefined>();
    for (const record of records) {
      const keys = record.dynamodb?.Keys as Item | undefined;
      if (!keys) throw new Error(`A stream record without keys: ${JSON.stringify(record)}`);
      const key = keyOf(keys);
      if (!before.has(key)) before.set(key, state.get(key));
      const image = record.dynamodb?.NewImage as Item | undefined;
      if (record.eventName === 'REMOVE') state.delete(key);
      else if (image) state.set(key, canonicalItem(image));
      else throw new Error(`A stream record of ${record.eventName} without its new image: is the stream's view NEW_IMAGE?`);
    }
    const changes: TableChange[] = [];
    for (const [key, old] of before) {
      const now = state.get(key);
      if (old === now) continue;
      changes.push({ kind: old === undefined ? 'added' : now === undefined ? 'removed' : 'changed', ...splitKey(key) });
    }
    return changes;
  }

  /** Takes the reference state, unless the last check left one that nothing has touched since. */
  async ready(): Promise<void> {
    if (!this.behind) return;
    await this.follow();
    this.behind = false;
  }

  /** Forgets the reference state: something (an accepted request) may have written. */
  invalidate(): void {
    this.behind = true;
  }

  /**
   * Waits until nothing changes for 50 ms (what an accepted request set going, such as a closed
   * socket's `$disconnect`, has landed) and takes that as the reference state.
   */
  async settle(timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    await this.follow();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const changed = (await this.follow()).length > 0;
      if (!changed || Date.now() > deadline) break;
    }
    this.behind = false;
  }

  /** What changed since {@link ready}; the state now becomes the reference. */
  async changes(): Promise<TableChange[]> {
    const changes = await this.follow();
    this.behind = false;
    return changes;
  }

  /**
   * Scans the whole table and throws, naming the items, where it differs from the state followed
   * from the stream (a record missed, a shard not read). Call it when the table is quiet (after
   * {@link settle}); it takes in what the stream holds first, as the reference.
   */
  async verify(): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      await this.follow();
      const scanned = await this.scan();
      // A write between the read and the scan would show as a difference that is none.
      if ((await this.follow()).length > 0 && attempt < 3) continue;
      const state = this.state ?? new Map<string, string>();
      const differences = [...new Set([...scanned.keys(), ...state.keys()])].filter((key) => scanned.get(key) !== state.get(key));
      this.behind = false;
      if (differences.length === 0) return;
      const shown = differences.slice(0, 5).map((key) => {
        const { pk, sk } = splitKey(key);
        return `${pk} / ${sk}: scanned ${scanned.get(key) ?? 'nothing'}, followed ${state.get(key) ?? 'nothing'}`;
      });
      throw new Error(`The table differs from the state followed from its stream at ${differences.length} items: ${shown.join('; ')}`);
    }
  }

  destroy(): void {
    this.tail?.destroy();
    this.client.destroy();
  }
}
