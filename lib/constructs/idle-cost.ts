import { type AlarmCost, alarmCost } from './alarm-cost.ts';

/**
 * What a deployment costs a month with no traffic at all, read from its templates at us-east-1 list
 * prices, before free tiers: what bills by the hour or by polling rather than by request. Everything
 * else (DynamoDB on demand, Lambda, API Gateway, SNS, Step Functions, X-Ray) bills traffic only, and
 * logs and the table's point-in-time backups bill by the GB stored, next to nothing while empty.
 * Quoted in docs/operations.md ("First deploy"), checked against the templates in
 * test/infra/deploy-docs.test.ts.
 */

/** Dollars a month. */
export const idlePrices = {
  perSecret: 0.4,
  perKmsKey: 1,
  /** CloudWatch bills a dashboard $3 a month beyond an account's first three. */
  perDashboard: 3,
  perMillionSqsRequests: 0.4,
} as const;

/**
 * Receives a month that Lambda's pollers make on an empty queue behind an event source mapping:
 * AWS does not publish the rate; the commonly measured one is five pollers long-polling 20 s each,
 * 15 requests a minute (15 × 60 × 730 hours).
 */
export const idleSqsReceivesPerQueueMonth = 15 * 60 * 730;

export interface IdleCost {
  readonly alarms: AlarmCost;
  readonly secrets: number;
  readonly kmsKeys: number;
  readonly dashboards: number;
  /** Queues a Lambda event source mapping polls (the table stream's mapping polls for free). */
  readonly polledQueues: number;
  readonly sqsDollars: number;
  readonly monthlyDollars: number;
}

interface TemplateLike {
  readonly Resources: Record<string, { readonly Type: string; readonly Properties?: Record<string, unknown> }>;
}

const cents = (dollars: number) => Math.round(dollars * 100) / 100;

export function idleCost(templates: readonly TemplateLike[]): IdleCost {
  const resources = templates.flatMap((template) => Object.values(template.Resources));
  const count = (type: string) => resources.filter((resource) => resource.Type === type).length;
  const alarms = alarmCost(templates);
  // A stream mapping has a starting position; a queue mapping has none.
  const polledQueues = resources.filter(
    (resource) => resource.Type === 'AWS::Lambda::EventSourceMapping' && resource.Properties?.StartingPosition === undefined,
  ).length;
  const secrets = count('AWS::SecretsManager::Secret');
  const kmsKeys = count('AWS::KMS::Key');
  const dashboards = count('AWS::CloudWatch::Dashboard');
  const sqsDollars = cents(((polledQueues * idleSqsReceivesPerQueueMonth) / 1_000_000) * idlePrices.perMillionSqsRequests);
  return {
    alarms,
    secrets,
    kmsKeys,
    dashboards,
    polledQueues,
    sqsDollars,
    monthlyDollars: cents(
      alarms.monthlyDollars +
        secrets * idlePrices.perSecret +
        kmsKeys * idlePrices.perKmsKey +
        dashboards * idlePrices.perDashboard +
        sqsDollars,
    ),
  };
}
