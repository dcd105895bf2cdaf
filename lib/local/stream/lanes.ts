import type { Consumer, Lane, PollerContext } from './context';
import { readLane } from './shard-reading';

const laneKey = (consumerId: string, shardId: string) => `${consumerId}\u0000${shardId}`;

/** Every consumer's lane on every shard, started in shard lineage order, as Lambda's event source mappings read them. */
export class Lanes {
  private readonly lanes = new Map<string, Lane>();
  private readonly loops = new Set<Promise<void>>();

  constructor(
    private readonly context: PollerContext,
    private readonly consumers: readonly Consumer[],
  ) {}

  /** Starts a lane for every shard whose parent (if the stream still lists it) this consumer has finished. */
  startReady(): void {
    if (this.context.signal.aborted) return;
    const { shards } = this.context;
    for (const consumer of this.consumers) {
      for (const [shardId, shard] of shards) {
        if (this.lanes.has(laneKey(consumer.definition.id, shardId))) continue;
        const parent = shard.ParentShardId;
        if (parent && shards.has(parent) && !this.lanes.get(laneKey(consumer.definition.id, parent))?.finished) continue;
        this.start({ consumer, shardId, finished: false, caughtUp: 0 });
      }
    }
  }

  private start(lane: Lane): void {
    this.lanes.set(laneKey(lane.consumer.definition.id, lane.shardId), lane);
    const loop = readLane(this.context, lane).finally(() => {
      this.loops.delete(loop);
      // A finished parent lets its children start now rather than at the next describe.
      if (lane.finished) this.startReady();
    });
    this.loops.add(loop);
  }

  /** The lanes (as `<consumer> on <shard>`) that have not read to the end of their shard since drain `generation` began. */
  lagging(generation: number): string[] {
    const behind: string[] = [];
    for (const consumer of this.consumers) {
      for (const shardId of this.context.shards.keys()) {
        const lane = this.lanes.get(laneKey(consumer.definition.id, shardId));
        if (!lane?.finished && (lane?.caughtUp ?? 0) < generation) behind.push(`${consumer.definition.id} on ${shardId}`);
      }
    }
    return behind;
  }

  /** Resolves when every lane's loop has ended (after the signal aborts). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.loops]);
  }
}
