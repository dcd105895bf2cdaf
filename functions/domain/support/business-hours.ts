import { actorId, type Principal } from '#shared/auth';
import {
  type BusinessHoursConfig,
  type BusinessHoursItem,
  findBusinessHours,
  type OpeningRange,
  putBusinessHours,
  WEEKDAYS,
  type Weekday,
} from '#shared/db/business-hours';

/**
 * Support hours: a timezone, opening ranges per weekday (`HH:MM`, local time, `close` after `open`,
 * `24:00` the end of the day) and holidays (local dates, closed all day). Whether support is open
 * and when it next opens are computed in the project's timezone with `Intl.DateTimeFormat`, so a
 * daylight saving change moves the instants and not the local hours.
 */

export const MAX_RANGES_PER_DAY = 6;
export const MAX_HOLIDAYS = 200;
/** How far ahead `nextOpensAt` looks: a year of holidays at most stands between two opening days. */
const SEARCH_DAYS = 400;

/** Whether `timezone` is an IANA zone (or alias) the runtime's Intl knows. */
export function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatterOf(timezone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timezone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    formatters.set(timezone, formatter);
  }
  return formatter;
}

interface LocalTime {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
}

/** The wall-clock time in `timezone` at `instant`. */
function localTimeOf(instant: number, timezone: string): LocalTime {
  const parts = Object.fromEntries(
    formatterOf(timezone)
      .formatToParts(new Date(instant))
      .map((part) => [part.type, part.value]),
  );
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
  };
}

/** Milliseconds `timezone` is ahead of UTC at `instant`. */
function offsetAt(instant: number, timezone: string): number {
  const local = localTimeOf(instant, timezone);
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second);
  return asUtc - Math.floor(instant / 1000) * 1000;
}

/**
 * The instant a wall-clock time in `timezone` happens: the first of two in the hour a clock goes
 * back, and the moment the clock jumps for a time the jump skips (support opens when 02:30 would
 * have been, i.e. at 03:00 local).
 */
export function instantOf(date: { year: number; month: number; day: number }, minutes: number, timezone: string): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day, 0, minutes);
  const candidates = [...new Set([wall - offsetAt(wall, timezone), wall - offsetAt(wall - offsetAt(wall, timezone), timezone)])].sort(
    (a, b) => a - b,
  );
  const wallAt = (instant: number) => {
    const local = localTimeOf(instant, timezone);
    return Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute);
  };
  const exact = candidates.find((instant) => wallAt(instant) === wall);
  if (exact !== undefined) return exact;
  // The wall time falls in a gap: the first minute whose wall time is past it is when the clock jumped.
  let [low, high] = [candidates[0] as number, candidates.at(-1) as number];
  while (high - low > 60_000) {
    const middle = low + Math.floor((high - low) / 120_000) * 60_000;
    if (wallAt(middle) >= wall) high = middle;
    else low = middle;
  }
  return high;
}

export const minutesOf = (time: string) => Number(time.slice(0, 2)) * 60 + Number(time.slice(3, 5));
const isoDate = (year: number, month: number, day: number) =>
  `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
/** Monday first, as `WEEKDAYS`; `Date#getUTCDay` starts on Sunday. */
const weekdayOf = (year: number, month: number, day: number): Weekday =>
  WEEKDAYS[(new Date(Date.UTC(year, month - 1, day)).getUTCDay() + 6) % 7] as Weekday;

export interface SupportStatus {
  readonly openNow: boolean;
  /** When support opens next, if it is closed now; `null` while open, or when it never opens. */
  readonly nextOpensAt: string | null;
  /** When the current opening range ends, while open. */
  readonly closesAt: string | null;
}

/** Whether support is open at `now` under `hours`, and when it next opens or closes. */
export function supportStatus(hours: BusinessHoursConfig, now: number): SupportStatus {
  const { timezone } = hours;
  const holidays = new Set(hours.holidays);
  const local = localTimeOf(now, timezone);
  const nowMinutes = local.hour * 60 + local.minute + local.second / 60;
  const rangesOf = (weekday: Weekday): OpeningRange[] =>
    [...(hours.weekly[weekday] ?? [])].sort((a, b) => minutesOf(a.open) - minutesOf(b.open));

  for (let offset = 0; offset < SEARCH_DAYS; offset++) {
    const day = new Date(Date.UTC(local.year, local.month - 1, local.day + offset));
    const date = { year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() };
    if (holidays.has(isoDate(date.year, date.month, date.day))) continue;
    for (const range of rangesOf(weekdayOf(date.year, date.month, date.day))) {
      const [open, close] = [minutesOf(range.open), minutesOf(range.close)];
      if (offset === 0 && open <= nowMinutes && nowMinutes < close) {
        return { openNow: true, nextOpensAt: null, closesAt: new Date(instantOf(date, close, timezone)).toISOString() };
      }
      const opensAt = instantOf(date, open, timezone);
      if (opensAt > now) return { openNow: false, nextOpensAt: new Date(opensAt).toISOString(), closesAt: null };
    }
  }
  return { openNow: false, nextOpensAt: null, closesAt: null };
}

const toBusinessHours = ({ timezone, weekly, holidays, updatedAt }: BusinessHoursItem) => ({
  timezone,
  weekly: Object.fromEntries(WEEKDAYS.map((weekday) => [weekday, weekly[weekday] ?? []])),
  holidays,
  updatedAt,
});

/**
 * `GET /support/business-hours`: the configuration and the status at `now`. A project that never
 * set hours is always open (`configured: false`): nothing says when support is away.
 */
export async function getBusinessHours(projectId: string, now = Date.now()) {
  const item = await findBusinessHours(projectId);
  if (!item) {
    return {
      configured: false,
      timezone: 'UTC',
      weekly: Object.fromEntries(WEEKDAYS.map((weekday) => [weekday, []])),
      holidays: [],
      updatedAt: null,
      openNow: true,
      nextOpensAt: null,
      closesAt: null,
    };
  }
  return { configured: true, ...toBusinessHours(item), ...supportStatus(item, now) };
}

/** `PUT /admin/support/business-hours`: replaces the hours (the body's shape is checked by its schema). */
export async function setBusinessHours(principal: Principal, hours: BusinessHoursConfig) {
  const weekly = Object.fromEntries(
    WEEKDAYS.map((weekday) => [weekday, [...(hours.weekly[weekday] ?? [])].sort((a, b) => minutesOf(a.open) - minutesOf(b.open))]),
  ) as BusinessHoursConfig['weekly'];
  await putBusinessHours(
    principal.projectId,
    { timezone: hours.timezone, weekly, holidays: [...new Set(hours.holidays)].sort() },
    { updatedAt: new Date().toISOString(), updatedBy: actorId(principal) },
  );
  return getBusinessHours(principal.projectId);
}
