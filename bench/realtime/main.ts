/**
 * `npx tsx bench/realtime/main.ts`: the realtime fan-out bench on its own, about three minutes.
 * Prints progress, then the "Realtime fan-out" Markdown section. Knobs: REALTIME_TARGETS (comma
 * list of plain, soketi, service), REALTIME_RECEIVERS (comma list of room sizes), REALTIME_JSON
 * (a file to write the raw figures to).
 */
import { writeFileSync } from 'node:fs';
import { renderRealtimeMarkdown, runRealtimeBench } from './index';
import type { TargetKind } from './protocol';

const list = (name: string) =>
  process.env[name]
    ?.split(',')
    .map((item) => item.trim())
    .filter(Boolean);

const targets = list('REALTIME_TARGETS') as TargetKind[] | undefined;
const receivers = list('REALTIME_RECEIVERS')?.map(Number);
const result = await runRealtimeBench({ ...(targets ? { targets } : {}), ...(receivers ? { receivers } : {}) });
if (process.env.REALTIME_JSON) writeFileSync(process.env.REALTIME_JSON, `${JSON.stringify(result, null, 2)}\n`);
console.log(`\n${renderRealtimeMarkdown(result)}`);
// Servers and clients are stopped; a lingering keep-alive socket must not hold the process.
process.exit(0);
