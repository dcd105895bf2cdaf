import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { BurstLog } from './pacing';

type Positions = Record<string, Record<string, string>>;

/** Per consumer and shard, the last sequence number done with; kept in a JSON file when there is one. */
export class Checkpoints {
  private writing: Promise<void> | undefined;
  private dirty = false;

  private readonly positions: Positions = {};

  private constructor(
    private readonly file: string | undefined,
    private readonly streamArn: string,
    private readonly log: BurstLog,
  ) {}

  /** Reads the file, keeping positions of this stream's shards that still exist. */
  static async load(file: string | undefined, streamArn: string, shardIds: ReadonlySet<string>, log: BurstLog): Promise<Checkpoints> {
    const checkpoints = new Checkpoints(file, streamArn, log);
    const text = file
      ? await readFile(file, 'utf8').catch((error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? undefined : Promise.reject(error)))
      : undefined;
    if (file && text !== undefined) {
      let saved: { streamArn?: unknown; positions?: unknown };
      try {
        saved = JSON.parse(text);
      } catch (error) {
        throw new Error(`${file} is not a stream checkpoint file: ${(error as Error).message}`);
      }
      if (typeof saved !== 'object' || saved === null || typeof saved.positions !== 'object' || saved.positions === null) {
        throw new Error(`${file} is not a stream checkpoint file: no positions`);
      }
      // A recreated table has a new stream whose shards share nothing with the old one.
      if (saved.streamArn === streamArn) {
        for (const [consumerId, shards] of Object.entries(saved.positions as Record<string, unknown>)) {
          for (const [shardId, sequenceNumber] of Object.entries((shards ?? {}) as Record<string, unknown>)) {
            if (shardIds.has(shardId) && typeof sequenceNumber === 'string') checkpoints.set(consumerId, shardId, sequenceNumber);
          }
        }
      }
    }
    return checkpoints;
  }

  get(consumerId: string, shardId: string): string | undefined {
    return this.positions[consumerId]?.[shardId];
  }

  set(consumerId: string, shardId: string, sequenceNumber: string): void {
    const shards = this.positions[consumerId] ?? {};
    shards[shardId] = sequenceNumber;
    this.positions[consumerId] = shards;
  }

  /** Drops the positions of a shard the stream no longer lists (trimmed after 24 h on AWS). */
  forget(shardId: string): void {
    for (const shards of Object.values(this.positions)) delete shards[shardId];
  }

  /**
   * Writes the positions (temp file + rename, so a crash never leaves half a file). Saves that
   * arrive while a write runs share the next write.
   */
  async save(): Promise<void> {
    if (!this.file) return;
    this.dirty = true;
    while (this.writing) await this.writing;
    if (!this.dirty) return;
    this.dirty = false;
    this.writing = this.write(this.file).finally(() => {
      this.writing = undefined;
    });
    await this.writing;
  }

  private async write(file: string): Promise<void> {
    const temporary = `${file}.${process.pid}.tmp`;
    try {
      await mkdir(dirname(file), { recursive: true });
      await writeFile(temporary, `${JSON.stringify({ streamArn: this.streamArn, positions: this.positions }, null, 2)}\n`);
      await rename(temporary, file);
      this.log.clear('writing checkpoints');
    } catch (error) {
      // The positions stay in memory; the next accepted batch tries again.
      this.log.report('writing checkpoints', error);
    }
  }
}
