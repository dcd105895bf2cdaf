/**
 * Stats: what counting costs the request path, and how fast a day of figures reads. Messages go
 * one at a time through the real route with the DynamoDB client instrumented (as in "Message
 * cost"); the figures of each request leave in its EMF record, so none of its requests may touch
 * a stats item. Then a project gets a full day of per-minute items, written by the aggregator's
 * own code (`aggregateFigures`, one figure per minute), and `GET /stats/ops?minutes=1440` is timed.
 */
import { type Bench, fmt, mark, table } from './harness';
import { recording } from './instrument';
import { createProject, MESSAGE_CONTENT, median, percentile, round, uniqueId } from './util';

const MESSAGES = 100;
const DAY = 1440;
const READERS = 8;
/** Under `RATE_LIMIT_STATS_READS_PER_MINUTE` (30 per user per minute): each reader makes this many. */
const READS_PER_READER = 25;
const GOAL_P99_MS = 200;

type StatsResult = {
  messages: number;
  requestsPerMessage: { median: number; mean: number };
  /** Requests naming a stats or alert item while a message was sent, per message: the aggregator's, if it ran in that window. */
  statsItemRequestsInMedianSample: number;
  typicalCommands: readonly string[];
  day: { buckets: number; seedMs: number; reads: number; p50Ms: number; p99Ms: number; series: number; bytes: number };
};

export const stats: Bench<StatsResult> = {
  id: 'stats',
  name: 'Stats',
  needs: 'service',
  async run({ service, log }) {
    const { api } = service;
    const project = await createProject(api, 'bench stats');
    const alice = await project.token('alice');
    const roomId = uniqueId('room');
    await api.expect(201, '/rooms', { token: alice, body: { id: roomId, type: 'group', members: [] } });
    for (let i = 0; i < 5; i++) await api.expect(201, '/messages', { token: alice, body: { roomId, content: MESSAGE_CONTENT } });

    const samples = await recording(
      service.clients,
      async (recorder) => {
        const out: { requests: number; stats: number; commands: string[] }[] = [];
        for (let i = 0; i < MESSAGES; i++) {
          const start = recorder.mark();
          await api.expect(201, '/messages', { token: alice, body: { roomId, content: MESSAGE_CONTENT } });
          const { dynamo } = recorder.since(start);
          out.push({
            requests: dynamo.length,
            stats: dynamo.filter((call) => call.partitionKeys.some((pk) => /#(STATS|ALERTS)$/.test(pk))).length,
            commands: dynamo.map((call) => call.command),
          });
        }
        return out;
      },
      { capacity: false },
    );
    const requests = samples.map((sample) => sample.requests);
    const medianSample = samples.find((sample) => sample.requests === median(requests)) ?? samples[0];
    log(`   ${MESSAGES} messages: median ${median(requests)} DynamoDB requests each`);

    // A day of minutes for a fresh project, through the aggregator's own write.
    const { aggregateFigures } = await import('#domain/stats/figures');
    const busy = await createProject(api, 'bench stats day');
    const now = Date.now();
    const figures = Array.from({ length: DAY }, (_, index) => ({
      projectId: busy.projectId,
      at: now - index * 60_000,
      counts: { requests_total: 1, messages: 3, connections: 1, webhook_delivered: 2, push_sent: 1, agent_invocations: 1 },
      latencyMs: 5 + (index % 400),
    }));
    const seedStarted = performance.now();
    for (let i = 0; i < figures.length; i += 120) await aggregateFigures(figures.slice(i, i + 120));
    const seedMs = performance.now() - seedStarted;

    const times: number[] = [];
    let series = 0;
    let bytes = 0;
    for (let reader = 0; reader < READERS; reader++) {
      const token = (await api.expect(201, '/auth/token', { apiKey: busy.apiKey, body: { userId: `ops-${reader}`, roles: ['admin'] } }))
        .body.token as string;
      for (let read = 0; read < READS_PER_READER; read++) {
        const started = performance.now();
        const answer = await api.expect(200, `/stats/ops?minutes=${DAY}`, { token });
        times.push(performance.now() - started);
        series = answer.body.series.length;
        bytes = JSON.stringify(answer.body).length;
      }
    }
    log(
      `   /stats/ops?minutes=${DAY}: ${series} minutes, p50 ${round(percentile(times, 50), 1)} ms, p99 ${round(percentile(times, 99), 1)} ms`,
    );
    return {
      messages: MESSAGES,
      requestsPerMessage: { median: median(requests), mean: round(requests.reduce((a, b) => a + b, 0) / requests.length, 3) },
      statsItemRequestsInMedianSample: medianSample?.stats ?? 0,
      typicalCommands: medianSample?.commands ?? [],
      day: {
        buckets: DAY,
        seedMs: round(seedMs, 0),
        reads: times.length,
        p50Ms: round(percentile(times, 50), 1),
        p99Ms: round(percentile(times, 99), 1),
        series,
        bytes,
      },
    };
  },

  goals: (result) => [
    {
      id: 'stats.requestPath',
      name: 'DynamoDB requests the counters add to a message on the request path',
      target: '0',
      measured: `${result.statsItemRequestsInMedianSample} (a message: ${result.requestsPerMessage.median} requests, ${result.typicalCommands.join(', ')})`,
      pass: result.statsItemRequestsInMedianSample === 0,
    },
    {
      id: 'stats.opsDay',
      name: `\`GET /stats/ops?minutes=${DAY}\` p99, a project with ${DAY} minute items`,
      target: `≤ ${GOAL_P99_MS} ms`,
      measured: `${fmt(result.day.p99Ms)} ms (p50 ${fmt(result.day.p50Ms)} ms, ${result.day.reads} reads)`,
      pass: result.day.p99Ms <= GOAL_P99_MS,
    },
  ],

  section(result, run) {
    const goals = stats.goals(result, run);
    return [
      '## Stats',
      '',
      "Counting a request costs no DynamoDB request: its figures leave in the invocation's EMF record and the aggregator sums them per project per minute off the request path (docs/stats.md). A message's requests are counted on the handlers' own client; a request naming a stats or alert item would be the counters'.",
      '',
      table(
        'Goal | Target | Measured | Result',
        goals.map((goal) => [goal.name, goal.target, goal.measured, mark(goal.pass)]),
      ),
      '',
      `A day of figures: ${result.day.buckets} minute items written by the aggregator's own update in ${fmt(result.day.seedMs, 0)} ms; the answer holds ${result.day.series} minutes (${fmt(result.day.bytes / 1024, 0)} KB).`,
    ].join('\n');
  },
};
