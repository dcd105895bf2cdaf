import type { Counters } from '#domain/stats/counters';
import { latencyCounts } from '#domain/stats/counters';
import { percentile } from '#domain/stats/histogram';
import type { Objectives } from '#domain/stats/score';
import { config } from '#shared/config';

/** A rule's verdict on a window of counters: its value and threshold, and whether it holds (the alert is due). */
export interface RuleVerdict {
  readonly rule: string;
  readonly firing: boolean;
  readonly value: number;
  readonly threshold: number;
  readonly summary: string;
}

const rate = (part: number, whole: number) => (whole > 0 ? part / whole : 0);

/**
 * The alert rules, against the project's objectives, each over the sum of the last `STATS_ALERT_WINDOW_MINUTES` minutes of a project.
 * An alert fires when its rule holds and resolves when it no longer does (evaluated after each
 * aggregator batch and once a minute for projects with an open alert, so one resolves when its
 * traffic stops too).
 */
export function judgeWindow(window: Readonly<Counters>, objectives: Objectives): RuleVerdict[] {
  const total = window.requests_total ?? 0;
  const serverErrors = window.requests_5xx ?? 0;
  const budget = 1 - objectives.availability;
  const burn = rate(serverErrors, total) / budget;
  const p95 = percentile(latencyCounts(window), 95) ?? 0;
  const pushFailed = window.push_failed ?? 0;
  const pushTried = (window.push_sent ?? 0) + pushFailed;
  const aiErrors = window.ai_errors ?? 0;
  const aiCalls = window.agent_invocations ?? 0;
  const webhookFailed = window.webhook_delivery_failed ?? 0;
  const enoughRequests = total >= config.STATS_ALERT_MIN_REQUESTS;
  return [
    {
      rule: 'error_budget_burn',
      firing: enoughRequests && burn >= config.STATS_ALERT_BURN_RATE,
      value: round(burn),
      threshold: config.STATS_ALERT_BURN_RATE,
      summary: `5xx answers spend the error budget ${round(burn)}× as fast as the availability objective (${objectives.availability}) allows`,
    },
    {
      rule: 'latency_p95',
      firing: enoughRequests && p95 > objectives.latencyP95Ms,
      value: p95,
      threshold: objectives.latencyP95Ms,
      summary: `p95 latency ${p95} ms over the objective`,
    },
    {
      rule: 'webhook_failures',
      firing: webhookFailed > 0,
      value: webhookFailed,
      threshold: 1,
      summary: `${webhookFailed} webhook deliveries failed for good (every retry spent; replay them from the console)`,
    },
    {
      rule: 'push_failure_rate',
      firing: pushTried >= config.STATS_ALERT_MIN_EVENTS && rate(pushFailed, pushTried) >= config.STATS_ALERT_PUSH_FAILURE_RATE,
      value: round(rate(pushFailed, pushTried)),
      threshold: config.STATS_ALERT_PUSH_FAILURE_RATE,
      summary: `${pushFailed} of ${pushTried} push sends failed`,
    },
    {
      rule: 'ai_provider_errors',
      firing: aiCalls >= config.STATS_ALERT_MIN_EVENTS && rate(aiErrors, aiCalls) >= config.STATS_ALERT_AI_ERROR_RATE,
      value: round(rate(aiErrors, aiCalls)),
      threshold: config.STATS_ALERT_AI_ERROR_RATE,
      summary: `${aiErrors} of ${aiCalls} AI calls failed at the provider`,
    },
  ];
}

const round = (value: number) => Math.round(value * 1000) / 1000;
