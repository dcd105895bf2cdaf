import { describe, expect, it } from 'vitest';
import { coalescingInput, costModel, DEFAULT_FRAMES_PER_MESSAGE } from '../../bench/cost-model.ts';
import type { CostRow } from '../../bench/realtime/cost.ts';
import { p99AgainstFloor } from '../../bench/realtime/index.ts';

/** A cost row as bench/realtime/cost.ts counts it, with only what the model reads. */
const row = (workload: 'message' | 'client', receivers: number, readUnits: number, gbMs: number): CostRow =>
  ({
    workload,
    receivers,
    dynamo: { writeUnits: workload === 'message' ? 3 : 1, readUnits },
    sqs: { handlers: 0, consumers: workload === 'message' ? 3.5 : 0 },
    snsPublishes: workload === 'message' ? 0.15 : 0,
    lambdaInvocations: workload === 'message' ? 2.9 : 1,
    lambdaGbSeconds: gbMs / 1000,
    postToConnection: receivers + (workload === 'message' ? 1 : 0),
  }) as unknown as CostRow;

const rows = [row('message', 10, 0.5, 13), row('client', 10, 0.5, 4), row('message', 100, 1, 10), row('client', 100, 1, 3)];

describe('the realtime cost model (bench/cost-model.ts)', () => {
  it('prices a room of 100 at the busy rate per message: a post per member, the inbound frame and the ack', () => {
    const model = costModel(rows, { framesPerMessage: DEFAULT_FRAMES_PER_MESSAGE, source: 'test', measured: false });
    const at = (n: number, coalesced: boolean) =>
      model?.rows.find((r) => r.receivers === n && r.rate === 'busy' && r.coalesced === coalesced);

    expect(at(100, false)?.work.apiGatewayMessages).toBe(101);
    expect(at(100, true)?.work.apiGatewayMessages).toBeCloseTo(1 + 1 + 99 * 0.25);
    // Quiet rooms are never coalesced; a room of 1,000 is extrapolated and goes through the queue.
    expect(model?.rows.filter((r) => r.rate === 'quiet' && r.coalesced)).toEqual([]);
    expect(at(1000, false)?.measured).toBe(false);
    expect(at(1000, false)?.work.sqsRequests).toBeGreaterThan(at(100, false)?.work.sqsRequests ?? 0);
    for (const r of model?.rows ?? []) expect(r.work.lambdaGbSeconds).toBeGreaterThanOrEqual(0);
  });

  it('takes the coalesced frames per message from a bench result when one carries it, else says it is a parameter', () => {
    expect(coalescingInput({ coalesce: { coalesced: { framesPerMessage: 0.2 } } }, 'here', {})).toMatchObject({
      framesPerMessage: 0.2,
      measured: true,
    });
    expect(coalescingInput({}, 'here', {})).toMatchObject({ framesPerMessage: DEFAULT_FRAMES_PER_MESSAGE, measured: false });
    expect(coalescingInput({}, 'here', {}).source).toContain('parameter');
  });

  it('judges the N = 100 client-* p99 against Soketi p99 plus the database floor', () => {
    expect(p99AgainstFloor(40, 30, 12)).toMatchObject({ limit: 42, pass: true });
    expect(p99AgainstFloor(45, 30, 12)).toMatchObject({ pass: false });
    expect(p99AgainstFloor(45, 30, undefined)).toBeNull();
  });
});
