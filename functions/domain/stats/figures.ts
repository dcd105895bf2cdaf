import { randomUUID } from 'node:crypto';
import {
  addCounters,
  type Counters,
  DOMAIN_COUNTERS,
  type Figure,
  latencyCounts,
  minuteOf,
  REQUEST_COUNTERS,
  sumByProjectMinute,
} from '#domain/stats/counters';
import { judgeWindow } from '#domain/stats/rules';
import { type Objectives, type SloReport, sloReport } from '#domain/stats/score';
import { config } from '#shared/config';
import { addToMinute, minutesBetween, readObjectives, writeObjectives } from '#shared/db/stats';
import { listAlertEvents, openAlert, openRules, projectsWithOpenAlerts, resolveAlert } from '#shared/db/stats-alerts';
import { logger } from '#shared/logger';

const ALERT_RETENTION_SECONDS = 90 * 86_400;

/**
 * Sums a batch of figures per project per minute and adds each sum with one update, then judges
 * the alert rules of the projects the batch touched. A batch the feed hands over twice (a retry)
 * counts twice: the figures are at-least-once, as CloudWatch's own are.
 */
export async function aggregateFigures(figures: Iterable<Figure>): Promise<{ updates: number; projects: number }> {
  const sums = [...sumByProjectMinute(figures).values()];
  const ttl = Math.floor(Date.now() / 1000) + config.STATS_RETENTION_DAYS * 86_400;
  await Promise.all(sums.map((sum) => addToMinute(sum.projectId, sum.minute, sum.counters, ttl)));
  const projects = new Set(sums.map((sum) => sum.projectId));
  await evaluateAlerts(projects);
  return { updates: sums.length, projects: projects.size };
}

/** Judges every rule for these projects (and for those with an open alert when `withOpen`), firing and resolving alerts. */
export async function evaluateAlerts(projectIds: Iterable<string>, options: { withOpen?: boolean } = {}): Promise<void> {
  const projects = new Set(projectIds);
  if (options.withOpen) for (const projectId of await projectsWithOpenAlerts()) projects.add(projectId);
  const now = Date.now();
  await Promise.all(
    [...projects].map(async (projectId) => {
      const current = minuteOf(now);
      const [minutes, open, objectives] = await Promise.all([
        minutesBetween(projectId, current - config.STATS_ALERT_WINDOW_MINUTES + 1, current),
        openRules(projectId),
        objectivesOf(projectId),
      ]);
      const window = minutes.reduce<Counters>((sum, minute) => addCounters(sum, minute.counters), {});
      const at = new Date(now).toISOString();
      for (const verdict of judgeWindow(window, objectives.objectives)) {
        if (verdict.firing && !open.has(verdict.rule)) {
          const id = `${at}#${verdict.rule}#${randomUUID().slice(0, 8)}`;
          const { firing: _firing, ...event } = verdict;
          if (await openAlert(projectId, { id, ...event, firedAt: at }, Math.floor(now / 1000) + ALERT_RETENTION_SECONDS)) {
            logger.warn('stats.alert_fired', { projectId, ...event });
          }
        } else if (!verdict.firing && open.has(verdict.rule)) {
          if (await resolveAlert(projectId, verdict.rule, at)) logger.info('stats.alert_resolved', { projectId, rule: verdict.rule });
        }
      }
    }),
  );
}

export interface OpsSeries {
  readonly minutes: number;
  readonly from: string;
  readonly to: string;
  /** One entry per minute that holds a figure, oldest first; a missing minute had none. */
  readonly series: { readonly minute: string; readonly counters: Counters }[];
  readonly totals: Counters;
}

const latencyName = /^lat_\d+$/;
/** What a series shows: every counter but the latency buckets (`/stats/slo` reads those). */
const SERIES_COUNTERS = [...REQUEST_COUNTERS, ...DOMAIN_COUNTERS];

/** The project's per-minute counters over the last `minutes` minutes (the current one included). */
export async function opsSeries(projectId: string, minutes: number): Promise<OpsSeries> {
  const current = minuteOf(Date.now());
  const from = current - minutes + 1;
  const rows = await minutesBetween(projectId, from, current, SERIES_COUNTERS);
  const totals: Counters = {};
  const series = rows.map((row) => {
    addCounters(totals, row.counters);
    const counters: Counters = {};
    for (const [name, value] of Object.entries(row.counters)) if (!latencyName.test(name)) counters[name] = value;
    return { minute: new Date(row.minute * 60_000).toISOString(), counters };
  });
  for (const name of Object.keys(totals)) if (latencyName.test(name)) delete totals[name];
  return { minutes, from: new Date(from * 60_000).toISOString(), to: new Date((current + 1) * 60_000).toISOString(), series, totals };
}

export interface ProjectObjectives {
  readonly objectives: Objectives;
  /** `settings` while the project keeps the defaults (`STATS_AVAILABILITY_OBJECTIVE`, `STATS_LATENCY_OBJECTIVE_MS`). */
  readonly source: 'project' | 'settings';
  readonly updatedAt: string | null;
  readonly updatedBy: string | null;
}

/** The objectives the project is held to: its own, or the settings' defaults. */
export async function objectivesOf(projectId: string): Promise<ProjectObjectives> {
  const stored = await readObjectives(projectId);
  if (!stored) {
    return {
      objectives: { availability: config.STATS_AVAILABILITY_OBJECTIVE, latencyP95Ms: config.STATS_LATENCY_OBJECTIVE_MS },
      source: 'settings',
      updatedAt: null,
      updatedBy: null,
    };
  }
  const { availability, latencyP95Ms, updatedAt, updatedBy } = stored;
  return { objectives: { availability, latencyP95Ms }, source: 'project', updatedAt, updatedBy };
}

/** Sets the project's objectives; the score and the rules judge by them from the next read on. */
export async function setObjectives(projectId: string, objectives: Objectives, actor: string): Promise<ProjectObjectives> {
  const updatedAt = new Date().toISOString();
  await writeObjectives(projectId, { ...objectives, updatedAt, updatedBy: actor });
  return { objectives, source: 'project', updatedAt, updatedBy: actor };
}

/** The project's health over the last `minutes` minutes against its objectives. */
export async function slo(projectId: string, minutes: number): Promise<SloReport & { minutes: number }> {
  const current = minuteOf(Date.now());
  const [rows, { objectives }] = await Promise.all([minutesBetween(projectId, current - minutes + 1, current), objectivesOf(projectId)]);
  const window = rows.reduce<Counters>((sum, row) => addCounters(sum, row.counters), {});
  const report = sloReport(
    { requests_total: window.requests_total ?? 0, requests_4xx: window.requests_4xx ?? 0, requests_5xx: window.requests_5xx ?? 0 },
    latencyCounts(window),
    objectives,
  );
  return { minutes, ...report };
}

export async function alerts(projectId: string, limit: number) {
  return { alerts: await listAlertEvents(projectId, limit) };
}
