import { Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { areas, streamConsumers } from '#wiring';
import { config } from '../../functions/shared/config.ts';
import { synthesizeStacks } from '../support/area-projection.ts';

/**
 * Hot rooms' delivery consumer (docs/architecture.md, "Hot rooms: coalesced delivery"): fed by the
 * table stream like the event publisher, only with coalesced message inserts, and with no batching
 * window of Lambda's own, so a window is one poll of the shard.
 */

const { stacks } = synthesizeStacks({ areas });
const realtime = () => {
  const stack = stacks.find((candidate) => candidate.name === 'Realtime');
  if (!stack) throw new Error('no Realtime stack');
  return Template.fromJSON(stack.template as unknown as Record<string, unknown>);
};
const roomDelivery = streamConsumers.find((consumer) => consumer.id === 'RoomDelivery');

describe('the RoomDelivery stream consumer', () => {
  it('reads only message inserts stored as coalesced, a poll at a time, with partial batch responses', () => {
    const template = realtime();
    template.hasResourceProperties('AWS::Lambda::EventSourceMapping', {
      StartingPosition: 'TRIM_HORIZON',
      BatchSize: 1000,
      MaximumBatchingWindowInSeconds: 0,
      FunctionResponseTypes: ['ReportBatchItemFailures'],
      FilterCriteria: {
        Filters: [
          {
            Pattern: JSON.stringify({
              eventName: ['INSERT'],
              dynamodb: { Keys: { sk: { S: [{ prefix: 'MSG#' }] } }, NewImage: { delivery: { S: ['coalesced'] } } },
            }),
          },
        ],
      },
    });
  });

  it('is read locally at the cadence of REALTIME_COALESCE_WINDOW_MS, whose default the wiring and the settings share', () => {
    expect(roomDelivery?.batchWindow?.setting).toBe('REALTIME_COALESCE_WINDOW_MS');
    // The infra tests run without these settings: the defaults.
    expect(config.REALTIME_COALESCE_WINDOW_MS).toBe(roomDelivery?.batchWindow?.defaultMs);
    expect(config).toMatchObject({ REALTIME_COALESCE_THRESHOLD_PER_SECOND: 5, REALTIME_COALESCE_HOLD_SECONDS: 60 });
  });
});
