import { Duration } from 'aws-cdk-lib';
import { Rule, Schedule } from 'aws-cdk-lib/aws-events';
import { LambdaFunction } from 'aws-cdk-lib/aws-events-targets';
import type { Construct } from 'constructs';
import type { ScheduleEntry } from '#wiring';
import type { ChatFunction } from './chat-function.ts';

/**
 * A schedule of the wiring table as an EventBridge rule invoking its function. A schedule with a
 * switch is enabled only when its setting is `true`, and its function gets the setting too, so a
 * rule enabled by hand still does nothing until the setting says so (the local scheduler obeys the
 * same setting). EventBridge retries a failed invocation twice within an hour.
 */
export function addSchedule(scope: Construct, entry: ScheduleEntry, fn: ChatFunction, switches: Readonly<Record<string, boolean>>): Rule {
  const enabled = entry.switch ? switches[entry.switch] === true : true;
  if (entry.switch) fn.addEnvironment(entry.switch, String(enabled));
  return new Rule(scope, `${entry.id}Schedule`, {
    description: `${entry.cron} (UTC): ${entry.summary}`,
    schedule: Schedule.expression(entry.cron),
    enabled,
    targets: [new LambdaFunction(fn, { retryAttempts: 2, maxEventAge: Duration.hours(1) })],
  });
}
