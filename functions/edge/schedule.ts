import middy, { type MiddlewareObj } from '@middy/core';
import type { Context, ScheduledEvent } from 'aws-lambda';
import { observability } from '#edge/middlewares/observability';
import { traceId } from '#edge/middlewares/trace-id';
import { config } from '#shared/config';
import { logger } from '#shared/logger';
import { inRequestContext } from '#shared/request-context';
import { type ScheduleEntry, schedules } from '#wiring';

/** What a scheduled run answers: whether it ran, and what it started. */
export type ScheduleOutcome = { readonly ran: false; readonly reason: string } | ({ readonly ran: true } & Record<string, unknown>);

/**
 * The middy pipeline of a schedule of the wiring table (an EventBridge rule on AWS, the local
 * scheduler): a trace id of the run's own (Lambda's request id), which the work it queues carries on, the log context, then the entry's switch: a run while its setting is not `true` does
 * nothing and says so. `run` gets the instant the schedule fired for.
 */
export function scheduleHandler(scheduleId: string, run: (at: Date) => Promise<Record<string, unknown>>) {
  const entry: ScheduleEntry | undefined = schedules.find((candidate) => candidate.id === scheduleId);
  if (!entry) throw new Error(`No schedule with id ${scheduleId} in functions/wiring/`);
  const pipeline = middy<ScheduledEvent, ScheduleOutcome, Error, Context>()
    .use(traceId() as MiddlewareObj<ScheduledEvent, unknown, Error, Context>)
    .use(observability<ScheduledEvent, Context>(() => ({ schedule: scheduleId })))
    .handler(async (event) => {
      if (entry.switch && config[entry.switch] !== true) {
        logger.info('schedule.switched_off', { schedule: scheduleId, setting: entry.switch });
        return { ran: false, reason: `${entry.switch} is not true` };
      }
      const at = event?.time ? new Date(event.time) : new Date();
      return { ran: true, ...(await run(Number.isNaN(at.getTime()) ? new Date() : at)) };
    });
  return inRequestContext(pipeline);
}
