import type { ScheduleEntry } from '#wiring';
import type { HandlerHost } from './handlers';

/**
 * The local stand-in for EventBridge schedules: each schedule of the wiring table fires its
 * handler at the times its cron expression names (UTC), with the event EventBridge sends. The clock
 * may run fast (`speed`) and start elsewhere (`startAt`), so a test sees 08:00 come within a second;
 * `fire` runs an entry now, as a test trigger or an operator's `POST /_local/schedules/<id>`.
 */

/** The allowed values of one cron field; `undefined` matches any. */
type FieldSet = ReadonlySet<number> | undefined;

export interface CronFields {
  readonly minutes: FieldSet;
  readonly hours: FieldSet;
  readonly daysOfMonth: FieldSet;
  readonly months: FieldSet;
  /** 1 (Sunday) to 7, as EventBridge counts. */
  readonly daysOfWeek: FieldSet;
}

const FIELD_RANGES = [
  ['minutes', 0, 59],
  ['hours', 0, 23],
  ['daysOfMonth', 1, 31],
  ['months', 1, 12],
  ['daysOfWeek', 1, 7],
] as const;

function parseField(text: string, name: string, min: number, max: number): FieldSet {
  if (text === '*' || text === '?') return undefined;
  const values = new Set<number>();
  for (const part of text.split(',')) {
    const match = /^(\d+)(?:-(\d+))?$/.exec(part);
    const from = Number(match?.[1]);
    const to = match?.[2] === undefined ? from : Number(match[2]);
    if (!match || from < min || to > max || from > to) {
      throw new Error(`Cron field ${name} "${text}": the local scheduler reads numbers ${min}-${max}, lists, ranges, * and ?`);
    }
    for (let value = from; value <= to; value++) values.add(value);
  }
  return values;
}

/** Reads `cron(minutes hours day-of-month month day-of-week year)`; the year must be `*`. */
export function parseCron(expression: string): CronFields {
  const inner = /^cron\((.*)\)$/.exec(expression.trim())?.[1];
  const fields = inner?.trim().split(/\s+/);
  if (fields?.length !== 6) throw new Error(`Not an EventBridge cron expression (six fields): ${expression}`);
  if (fields[5] !== '*') throw new Error(`The local scheduler takes * as the year only: ${expression}`);
  const parsed = Object.fromEntries(
    FIELD_RANGES.map(([name, min, max], index) => [name, parseField(fields[index] as string, name, min, max)]),
  );
  return parsed as unknown as CronFields;
}

const matches = (set: FieldSet, value: number) => set === undefined || set.has(value);

/** The first whole minute strictly after `after` (UTC) that the fields match. */
export function nextFireAfter(fields: CronFields, after: number): number {
  const start = new Date(after);
  start.setUTCSeconds(0, 0);
  let candidate = start.getTime() + 60_000;
  // Minute steps within matching days, day steps otherwise: at most a few years of days.
  for (let guard = 0; guard < 2_000_000; guard++) {
    const date = new Date(candidate);
    const dayMatches =
      matches(fields.months, date.getUTCMonth() + 1) &&
      matches(fields.daysOfMonth, date.getUTCDate()) &&
      matches(fields.daysOfWeek, date.getUTCDay() + 1);
    if (!dayMatches) {
      candidate = Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), date.getUTCDate() + 1);
      continue;
    }
    if (matches(fields.hours, date.getUTCHours()) && matches(fields.minutes, date.getUTCMinutes())) return candidate;
    candidate += 60_000;
  }
  throw new Error('The cron expression never matches');
}

export interface ScheduleClock {
  /** The scheduler's time when it starts. @default now */
  readonly startAt?: number;
  /** Scheduler milliseconds per real millisecond. @default 1 */
  readonly speed?: number;
}

export interface LocalScheduler {
  /** Runs the entry now (the scheduler's now) and answers what its handler returned. */
  fire(scheduleId: string): Promise<unknown>;
  /** How often each entry fired on its own clock (not by `fire`). */
  firedOnSchedule(): Readonly<Record<string, number>>;
  stop(): void;
}

export function startScheduler(options: {
  readonly schedules: readonly ScheduleEntry[];
  readonly handlers: HandlerHost;
  readonly clock?: ScheduleClock;
  readonly onError?: (scheduleId: string, error: unknown) => void;
}): LocalScheduler {
  const realStart = Date.now();
  const virtualStart = options.clock?.startAt ?? realStart;
  const speed = options.clock?.speed ?? 1;
  const now = () => virtualStart + (Date.now() - realStart) * speed;
  const timers = new Map<string, NodeJS.Timeout>();
  const fired: Record<string, number> = {};
  let stopped = false;

  const invoke = (entry: ScheduleEntry, at: number) =>
    options.handlers.invoke(entry.handler, entry.id, {
      version: '0',
      id: `local-${entry.id}-${at}`,
      'detail-type': 'Scheduled Event',
      source: 'aws.events',
      account: '000000000000',
      time: new Date(at).toISOString(),
      region: 'us-east-1',
      resources: [`arn:aws:events:us-east-1:000000000000:rule/${entry.id}Schedule`],
      detail: {},
    });

  const arm = (entry: ScheduleEntry, fields: CronFields) => {
    if (stopped) return;
    const at = nextFireAfter(fields, now());
    // Timers cap at about 24.8 days; a later time is re-armed on the way.
    const delay = Math.min((at - now()) / speed, 2 ** 31 - 1);
    const timer = setTimeout(() => {
      if (now() < at) return arm(entry, fields);
      fired[entry.id] = (fired[entry.id] ?? 0) + 1;
      invoke(entry, at)
        .catch((error: unknown) => options.onError?.(entry.id, error))
        .finally(() => arm(entry, fields));
    }, delay);
    timer.unref();
    timers.set(entry.id, timer);
  };
  for (const entry of options.schedules) arm(entry, parseCron(entry.cron));

  return {
    fire(scheduleId) {
      const entry = options.schedules.find((candidate) => candidate.id === scheduleId);
      if (!entry) return Promise.reject(new Error(`No schedule ${scheduleId}`));
      return invoke(entry, now());
    },
    firedOnSchedule: () => ({ ...fired }),
    stop() {
      stopped = true;
      for (const timer of timers.values()) clearTimeout(timer);
    },
  };
}
