/**
 * What DynamoDB Local alone adds to a `client-*` frame on the service: the two requests `$default`
 * makes for one (the connection's rate-limit window and the room's connection list), made as the
 * handler makes them, in parallel, through the handlers' own client, and at the fixed window's
 * pace, so each meets DynamoDB Local as idle as a frame meets it. Soketi has no database on its
 * path, so this is the share of the service's latency over Soketi's that no handler can remove
 * on this stand-in (DynamoDB on AWS answers in a few milliseconds, more than this).
 */
import { percentile, round, sleep } from '../util';

/** Frames' worth of request pairs: half the fixed window, enough for p50 and p90. */
const PAIRS = 50;

export async function databaseFloor(projectId: string, roomId: string, rate: number) {
  // Imported here: these modules read their settings from the environment the local runtime set.
  const { consumeRateLimit } = await import('#domain/rate-limit/rate-limit');
  const { roomConnections } = await import('#domain/realtime/connections');
  const pair = async () => {
    const started = performance.now();
    await Promise.all([
      consumeRateLimit(projectId, 'client-events', ['database-floor'], Number.MAX_SAFE_INTEGER, 1000),
      roomConnections(projectId, roomId),
    ]);
    return performance.now() - started;
  };
  const paced: number[] = [];
  for (let i = 0; i < PAIRS; i++) {
    await sleep(1000 / rate);
    paced.push(await pair());
  }
  // The same pairs with no pause between them: what the idle gap adds.
  const backToBack: number[] = [];
  for (let i = 0; i < PAIRS; i++) backToBack.push(await pair());
  return {
    pairs: PAIRS,
    rate,
    p50: round(percentile(paced, 50), 2),
    p90: round(percentile(paced, 90), 2),
    max: round(Math.max(...paced), 2),
    backToBackP50: round(percentile(backToBack, 50), 2),
  };
}

export type DatabaseFloor = Awaited<ReturnType<typeof databaseFloor>>;
