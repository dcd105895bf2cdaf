import { type AttributeValue, DynamoDBClient, ScanCommand } from '@aws-sdk/client-dynamodb';

type Item = Record<string, AttributeValue>;

/** One item added, removed or changed between two scans. */
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

/** The writes a refusal may make: counters of what was refused. */
export const isRefusalCounter = (change: TableChange) => isRateLimitWindow(change) || isSignInFailureRecord(change);

const keyOf = (item: Item) => `${item.pk?.S ?? ''}\u0000${item.sk?.S ?? ''}`;

/** Attribute order in a scan is not guaranteed; compare items by a canonical rendering. */
function canonical(value: unknown): string {
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64');
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'undefined';
}

/**
 * Every item of a table, read with a client of the test's own, compared before and after a
 * request: a refused request must leave the table as it was. Only meaningful on a runtime no other
 * suite writes to (the fuzz suite starts its own).
 */
export class TableWatch {
  /** Open to tests that set up table state the API cannot reach in time (a rate-limit window ahead). */
  readonly client: DynamoDBClient;
  private snapshot: Map<string, string> | undefined;
  /** Full scans made, for the suite's summary. */
  scans = 0;

  constructor(
    endpoint: string,
    private readonly tableName: string,
  ) {
    this.client = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  }

  private async scan(): Promise<Map<string, string>> {
    const items = new Map<string, string>();
    let start: Item | undefined;
    do {
      const page = await this.client.send(new ScanCommand({ TableName: this.tableName, ConsistentRead: true, ExclusiveStartKey: start }));
      for (const item of page.Items ?? []) items.set(keyOf(item), canonical(item));
      start = page.LastEvaluatedKey;
    } while (start);
    this.scans++;
    return items;
  }

  /** Takes the reference state, unless the last check left one that nothing has touched since. */
  async ready(): Promise<void> {
    this.snapshot ??= await this.scan();
  }

  /** Forgets the reference state: something (an accepted request) may have written. */
  invalidate(): void {
    this.snapshot = undefined;
  }

  /**
   * Waits until two scans 50 ms apart agree (what an accepted request set going, such as a closed
   * socket's `$disconnect`, has landed) and takes that as the reference state.
   */
  async settle(timeoutMs = 3000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let previous = await this.scan();
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 50));
      const next = await this.scan();
      const same = next.size === previous.size && [...next].every(([key, item]) => previous.get(key) === item);
      previous = next;
      if (same || Date.now() > deadline) break;
    }
    this.snapshot = previous;
  }

  /** What changed since {@link ready}; the state now becomes the reference. */
  async changes(): Promise<TableChange[]> {
    const before = this.snapshot ?? (await this.scan());
    const after = await this.scan();
    this.snapshot = after;
    const split = (key: string) => {
      const [pk = '', sk = ''] = key.split('\u0000');
      return { pk, sk };
    };
    const changes: TableChange[] = [];
    for (const [key, item] of after) {
      const old = before.get(key);
      if (old === undefined) changes.push({ kind: 'added', ...split(key) });
      else if (old !== item) changes.push({ kind: 'changed', ...split(key) });
    }
    for (const key of before.keys()) if (!after.has(key)) changes.push({ kind: 'removed', ...split(key) });
    return changes;
  }

  destroy(): void {
    this.client.destroy();
  }
}
