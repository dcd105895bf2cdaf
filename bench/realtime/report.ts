/** The "Realtime fan-out" section of docs/performance.md, generated from one run's result. */

import { PRICES } from './cost';
import type { RealtimeBenchResult, TargetResult } from './index';
import { fixedRateFor, maxDeliveries, P99_BOUND_MS, type SeriesResult, type WindowFigures } from './measure';
import type { Workload } from './protocol';

const fmt = (value: number | null | undefined, digits = 1) =>
  value === null || value === undefined || !Number.isFinite(value) ? 'n/a' : value.toFixed(digits).replace(/\.0+$/, '');
const mark = (pass: boolean | null) => (pass === null ? 'n/a' : pass ? 'PASS' : '**MISS**');
const frameName = (workload: Workload) => (workload === 'message' ? 'message (persisted)' : '`client-*` event');

function table(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.map((cell) => String(cell).replace(/\|/g, '\\|')).join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

const errors = (w: WindowFigures) =>
  Object.entries(w.senderErrors)
    .map(([code, count]) => `${count} × ${code}`)
    .join(', ');

function delivered(w: WindowFigures): string {
  const share = `${fmt(w.deliveredShare * 100, 2)} %`;
  const extra = [errors(w), w.duplicates ? `${w.duplicates} duplicates` : ''].filter(Boolean).join('; ');
  return extra ? `${share} (${extra})` : share;
}

function fixedRows(targets: readonly TargetResult[]) {
  return targets.flatMap((target) =>
    target.series.map((s) => [
      target.label,
      frameName(s.workload),
      s.receivers,
      `${s.fixed.sent} / ${s.fixed.expected}`,
      delivered(s.fixed),
      fmt(s.fixed.deliveriesPerSecond, 0),
      fmt(s.fixed.latencyMs.p50, 1),
      fmt(s.fixed.latencyMs.p99, 1),
      fmt(s.fixed.latencyMs.max, 1),
      fmt(s.fixed.serverCpuPercent, 0),
      `${fmt(s.fixed.receiversCpuPercent, 0)} / ${s.fixed.receiversElu.toFixed(2)}`,
      fmt(s.fixed.otherCpuPercent, 0),
    ]),
  );
}

function searchRows(targets: readonly TargetResult[]) {
  return targets.flatMap((target) =>
    target.series.map((s) => {
      const best = s.search.atMax;
      const steps = [s.fixed, ...s.search.steps]
        .map((w) => `${fmt(w.rate, 2)} ${w.pass ? '✓' : '✗'}${w.settled ? '' : ' (backlog)'}`)
        .join(', ');
      return [
        target.label,
        frameName(s.workload),
        s.receivers,
        best
          ? `${fmt(best.rate, 2)}${s.search.failedAt === null ? ' (never failed: a floor)' : ''}`
          : `none (< ${fmt(s.search.failedAt, 2)})`,
        best ? fmt(maxDeliveries(s), 0) : 'n/a',
        best ? `${fmt(best.latencyMs.p50, 1)} / ${fmt(best.latencyMs.p99, 1)}` : 'n/a',
        fmt(s.search.failedAt, 2),
        `${steps}${s.search.truncated ? ' (time budget)' : ''}`,
      ];
    }),
  );
}

function ratioRows(result: RealtimeBenchResult) {
  const find = (target: string, workload: Workload, n: number): SeriesResult | undefined =>
    result.targets.find((t) => t.target === target)?.series.find((s) => s.workload === workload && s.receivers === n);
  const ratio = (a: number | null | undefined, b: number | null | undefined) =>
    a === null || a === undefined || !b ? 'n/a' : `${Number((a / b).toPrecision(2))} ×`;
  /** Highest-rate ratio; a side that never failed is a floor, which bounds the ratio one way only. */
  const rateRatio = (service: SeriesResult | undefined, base: SeriesResult | undefined) => {
    const value = ratio(maxDeliveries(service), maxDeliveries(base));
    if (value === 'n/a') return service && !service.search.atMax ? '0 (none passed)' : value;
    const serviceFloor = service?.search.failedAt === null;
    const baseFloor = base?.search.failedAt === null;
    if (serviceFloor && baseFloor) return `${value} (both floors)`;
    if (baseFloor) return `≤ ${value}`;
    if (serviceFloor) return `≥ ${value}`;
    return value;
  };
  return result.receivers.flatMap((n) =>
    (['client', 'message'] as const).map((workload) => {
      const service = find('service', workload, n);
      const soketi = find('soketi', 'client', n);
      const plain = find('plain', 'client', n);
      return [
        n,
        frameName(workload),
        rateRatio(service, soketi),
        rateRatio(service, plain),
        ratio(service?.fixed.latencyMs.p99, soketi?.fixed.latencyMs.p99),
        ratio(service?.fixed.latencyMs.p99, plain?.fixed.latencyMs.p99),
      ];
    }),
  );
}

function costSection(result: RealtimeBenchResult): string {
  const rows = result.cost.rows.map((row) => [
    frameName(row.workload),
    row.receivers,
    `${row.complete} / ${row.frames}`,
    `${fmt(row.dynamo.requestsMedian, 2)} / ${fmt(row.dynamo.requestsMean, 2)}`,
    Object.entries(row.dynamo.byCommand)
      .map(([command, count]) => `${command} ${fmt(count, 2)}`)
      .join(', '),
    `${fmt(row.dynamo.writeUnits, 2)} / ${fmt(row.dynamo.readUnits, 2)}`,
    `${fmt(row.sqs.handlers, 2)} + ${fmt(row.sqs.consumers, 2)}`,
    fmt(row.lambdaInvocations, 2),
    `${fmt(row.postToConnection, 2)}${row.postToConnectionGone ? ` (${fmt(row.postToConnectionGone, 2)} gone)` : ''}`,
    fmt(row.apiGatewayMessages, 2),
  ]);
  const prices = result.cost.rows.map((row) => [
    frameName(row.workload),
    row.receivers,
    ...Object.values(row.pricePerMillion).map((price) => `$${fmt(price, 3)}`),
    `**$${fmt(row.pricePerMillionTotal, 2)}**`,
  ]);
  const priceHeader = result.cost.rows[0] ? Object.keys(result.cost.rows[0].pricePerMillion) : ['DynamoDB', 'SQS', 'API Gateway', 'Lambda'];
  return `### AWS work per frame (service)

Frames are sent one at a time after ${'3'} warm-up frames, each waited for until every receiver has it (and, for a message, the sender its \`ack\`); the counts are divided by the number of frames. DynamoDB requests and capacity units are counted by SDK middleware on the handlers' own client (\`bench/instrument.ts\`, as in section 1; "median" is per frame, the rest are means); SQS requests are the handlers' (\`SendMessageBatch\` of domain events and realtime jobs) plus the local queue consumers' non-empty receives and batch deletes (the long polls that come back empty are a fixed cost of an SQS event source, not a per-frame one, and are left out); Lambda invocations are the \`$default\` call of the frame plus every queue-consumer invocation; \`PostToConnection\` calls are the local gateway's count of management API posts (\`runtime.gateway.managementStats()\`), the ack to the sender included.${result.cost.error ? `\n\n**Not complete:** ${result.cost.error}` : ''}

${rows.length ? table(['Frame', 'N', 'Complete', 'DynamoDB requests median / mean', 'By command (mean)', 'WU / RU', 'SQS requests handlers + consumers', 'Lambda invocations', 'PostToConnection', 'API Gateway messages'], rows) : '_No cost figures._'}

Price per million frames, us-east-1 list prices: DynamoDB on-demand $${PRICES.dynamoPerMillionWriteUnits}/M WRU and $${PRICES.dynamoPerMillionReadUnits}/M RRU; SQS $${PRICES.sqsPerMillionRequests}/M requests (every request here carries under 64 KB); API Gateway WebSocket $${PRICES.apiGatewayWebSocketPerMillionMessages}/M messages, counting the inbound frame and each \`PostToConnection\` as one 32 KB unit (connection minutes, $0.25/M, are left out: they depend on how long clients stay, not on traffic); Lambda $${PRICES.lambdaPerMillionInvocations}/M requests, duration left out (the handlers here spend most of their time waiting on DynamoDB and the management API, and billed duration depends on memory size and on AWS latencies this machine cannot show).

${prices.length ? table(['Frame', 'N', ...priceHeader, 'Total per million frames'], prices) : ''}`;
}

/** The section, starting with its `## Realtime fan-out` heading. */
export function renderRealtimeMarkdown(result: RealtimeBenchResult): string {
  const s = result.settings;
  const m = result.machine;
  const goals = result.goals.map((g) => [g.name, g.target, g.measured, mark(g.pass)]);
  const software = result.targets.map(
    (t) => `- **${t.label}**: ${t.software}${t.error ? ` — **stopped early:** ${t.error}` : ''} (${fmt(t.seconds, 0)} s)`,
  );
  const connectRows = result.targets.map((t) => [
    t.label,
    ...result.receivers.map((n) => {
      const step = t.connect.find((c) => c.receivers === n);
      return step ? fmt(step.ms, 0) : 'n/a';
    }),
  ]);
  const notes = [...result.notes, ...result.targets.filter((t) => t.error).map((t) => `${t.label} stopped early: ${t.error}`)];
  return `## Realtime fan-out

<!-- Generated by bench/realtime (runRealtimeBench, renderRealtimeMarkdown). -->

One room, N = ${result.receivers.join(', ')} receivers and one sender, on ${m.cpus} cores (${m.cpuModel}), Node ${m.node}, load average ${m.loadAverageAtStart} at the start; ${fmt(result.seconds, 0)} s in all. The same workload runs against three servers:

${software.join('\n')}

What runs where: the server under test is the bench process (plain \`ws\`, and the service with everything the local runtime hosts in process, plus DynamoDB Local's JVM) or its own child process (Soketi). The sender and all N receivers live in a separate receivers child (\`bench/realtime/receivers.ts\`, one per target), so client CPU is never charged to the server; they still share the machine's ${m.cpus} cores with it. The sender stamps every frame with its send time (\`performance.timeOrigin + performance.now()\`, one clock for the whole machine); each receiver takes its receipt time on the same clock. Latency is send → receipt over every delivery; deliveries per second are deliveries over first send → last delivery. Before every window the room must go quiet (no frame for ${s.quietMs} ms), so a window never starts on the backlog of the last one. The sender offers frames open loop (each at its time, whatever came back). A \`client-*\` event is \`{ type: "client-bench", data }\` on the service and the plain server and \`channel.trigger("client-bench", data)\` on a Soketi private channel (authorized by an HMAC signature the child makes itself); a message is the service's \`{ type: "message", content }\` frame, stored and fanned out as \`{ type: "message", message }\`. Every frame carries the same 120-character text.

- **Fixed rate**: ${s.fixedRate} frames/s, but at most ${s.fixedDeliveries} deliveries/s (so ${result.receivers.map((n) => `${fmt(fixedRateFor(s, n), 2)} at N = ${n}`).join(', ')}), for ${fmt(s.fixedWindowMs / 1000, 1)} s; late deliveries are waited for up to ${fmt(s.fixedDrainMs / 1000, 1)} s after the last send.
- **Highest rate**: starting from the fixed window, up to ${s.searchSteps} more windows of ${fmt(s.searchWindowMs.min / 1000, 1)}–${fmt(s.searchWindowMs.max / 1000, 1)} s (at least ${s.searchFrames} frames): ×${s.searchFactor} after a pass, ÷${s.searchFactor} after a failure, the geometric middle once a pass and a failure bracket the limit. A window passes when every frame reached every receiver within ${fmt(s.searchDrainMs / 1000, 1)} s of the last send, p99 ≤ ${P99_BOUND_MS} ms and the sender got no error frame. The figure is the highest passing rate tried, so it is a lower bound on the limit, which lies below the first failing rate; when nothing failed it is only a floor. The search gives up early when a failing window had no queueing at all (each frame delivered before the next was sent): then one frame alone takes longer than the bound and no lower rate passes. Each target's searches stop taking steps after its time budget (${Object.entries(
    result.budgetSeconds,
  )
    .map(([target, seconds]) => `${target} ${seconds} s`)
    .join(', ')}).

Server CPU is the server under test's processes (the bench process for plain \`ws\`; Soketi's process; the bench process plus DynamoDB Local for the service), in % of one core over the window; the receivers' CPU and event-loop utilization (ELU) tell whether the clients could keep up: an ELU near 1 means the receivers child, not the server, set the pace. "Other" is every other process on the machine (busy time from \`/proc/stat\` less the two), which should be near 0.

### Goals

${table(['Goal', 'Target', 'Measured', 'Result'], goals)}

### At the fixed rate

${table(['Server', 'Frame', 'N', 'Sent / expected deliveries', 'Delivered', 'Deliveries/s', 'p50 ms', 'p99 ms', 'max ms', 'Server CPU %', 'Receivers CPU % / ELU', 'Other CPU %'], fixedRows(result.targets))}

### Highest rate with p99 ≤ ${P99_BOUND_MS} ms and every frame delivered

${table(['Server', 'Frame', 'N', 'Highest passing rate (frames/s)', 'Deliveries/s there', 'p50 / p99 ms there', 'First failing rate', 'Rates tried (✓ pass, ✗ fail)'], searchRows(result.targets))}

### Service ÷ baselines

Deliveries per second at the highest passing rate, and p99 at the fixed rate; the baselines carry \`client-*\` events only (they store nothing), so the message rows compare a persisted message with a relayed event. "≤" marks a ratio whose baseline never failed (its figure is a floor, so the true ratio is at most this).

${table(['N', 'Service frame', 'Deliveries/s ÷ Soketi', 'Deliveries/s ÷ plain ws', 'p99 ÷ Soketi', 'p99 ÷ plain ws'], ratioRows(result))}

### Time to connect

Milliseconds to grow the room to N (from the previous N, the sender first), every new socket ready: open (plain), subscribed (Soketi), or its \`connected\` frame received (service), ${50} at a time.

${table(['Server', ...result.receivers.map((n) => `N = ${n}`)], connectRows)}

${costSection(result)}
${notes.length ? `\n### Notes\n\n${notes.map((note) => `- ${note}`).join('\n')}\n` : ''}`;
}
