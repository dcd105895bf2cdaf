import type { Area, RateLimit } from './types.ts';

/** One budget for the three reads: each is a query of up to a day of minute items. */
const statsReads: RateLimit = { bucket: 'stats-reads', per: 'user', setting: 'RATE_LIMIT_STATS_READS_PER_MINUTE' };

/**
 * The project's operational figures: per-minute counters summed off the request path from the
 * functions' EMF records (a log subscription) and the events outbox, the health score against the
 * objectives, and the alerts the rules raised. Reading them takes a moderator: a member of a chat
 * has no business with the project's error rates (docs/stats.md).
 */
export const stats: Area = {
  id: 'Stats',
  summary: 'Per-project counters, health score and alerts: /stats/ops, /stats/slo, /stats/alerts and the aggregator behind them',
  httpRoutes: [
    {
      id: 'GetOpsStats',
      method: 'GET',
      path: '/stats/ops',
      handler: 'http/stats/get-ops.ts',
      auth: 'userOrService',
      minRole: 'moderator',
      rateLimit: statsReads,
      bindings: ['table:read'],
      summary: "Per-minute counters of the caller's project over the last `minutes` (1–1440) minutes",
    },
    {
      id: 'GetSloStats',
      method: 'GET',
      path: '/stats/slo',
      handler: 'http/stats/get-slo.ts',
      auth: 'userOrService',
      minRole: 'moderator',
      rateLimit: statsReads,
      bindings: ['table:read'],
      summary: "The project's health score, requests, errors and latency percentiles over the last `minutes` minutes",
    },
    {
      id: 'ListStatsAlerts',
      method: 'GET',
      path: '/stats/alerts',
      handler: 'http/stats/list-alerts.ts',
      auth: 'userOrService',
      minRole: 'moderator',
      rateLimit: statsReads,
      bindings: ['table:read'],
      summary: "The project's alert events, newest first, each with when it fired and resolved",
    },
    {
      id: 'GetStatsObjectives',
      method: 'GET',
      path: '/admin/stats/objectives',
      handler: 'http/stats/get-objectives.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: "The availability and latency objectives the project's health score and alert rules judge by",
    },
    {
      id: 'PutStatsObjectives',
      method: 'PUT',
      path: '/admin/stats/objectives',
      handler: 'http/stats/put-objectives.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      audit: { action: 'stats.set_objectives', target: ['body.availability', 'body.latencyP95Ms'] },
      summary: "Set the project's own availability (0.9–0.99999) and latency p95 (50–10000 ms) objectives",
    },
  ],
  eventSubscribers: [
    {
      id: 'FigureEventCounter',
      eventTypes: ['message.created'],
      handler: 'workers/count-figure-events.ts',
      batchSize: 10,
      maxConcurrency: 2,
      timeoutSeconds: 30,
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 3,
      bindings: ['table:read', 'table:write'],
      summary: 'Counts messages per project per minute from the outbox (one update per project-minute per batch)',
    },
  ],
  logSubscribers: [
    {
      id: 'FigureAggregator',
      filterPattern: '{ $.figures = "v1" }',
      matches: { key: 'figures', value: 'v1' },
      handler: 'workers/aggregate-figures.ts',
      timeoutSeconds: 60,
      bindings: ['table:read', 'table:write'],
      summary:
        "Sums the functions' request and domain figures (EMF records with a project) per project per minute and judges the alert rules",
    },
  ],
  schedules: [
    {
      id: 'StatsAlerts',
      cron: 'cron(* * * * ? *)',
      handler: 'workers/evaluate-alerts.ts',
      timeoutSeconds: 60,
      bindings: ['table:read', 'table:write'],
      summary: 'Judges the alert rules of projects with an open alert once a minute, so an alert resolves when its traffic stops',
    },
  ],
};
