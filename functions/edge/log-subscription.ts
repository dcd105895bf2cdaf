import { gunzipSync } from 'node:zlib';
import middy from '@middy/core';
import type { CloudWatchLogsEvent, Context } from 'aws-lambda';
import { observability } from '#edge/middlewares/observability';
import { logger } from '#shared/logger';
import { logSubscribers } from '#wiring';

/**
 * The middy pipeline of a log subscriber of the wiring table: the log context, then the batch as
 * CloudWatch Logs delivers it (`awslogs.data`, gzip then base64) unpacked into the JSON records of
 * its lines. A line that is not JSON is logged and skipped; retrying cannot mend it.
 */
export function logSubscriptionHandler(subscriberId: string, run: (records: readonly Record<string, unknown>[]) => Promise<unknown>) {
  if (!logSubscribers.some((candidate) => candidate.id === subscriberId))
    throw new Error(`No log subscriber with id ${subscriberId} in functions/wiring/`);
  return middy<CloudWatchLogsEvent, unknown, Error, Context>()
    .use(observability<CloudWatchLogsEvent, Context>(() => ({ consumer: subscriberId })))
    .handler(async (event) => {
      const batch = JSON.parse(gunzipSync(Buffer.from(event.awslogs.data, 'base64')).toString('utf8')) as {
        messageType: string;
        logEvents?: { id: string; message: string }[];
      };
      // CloudWatch Logs checks a new subscription with a CONTROL_MESSAGE; it carries no records.
      if (batch.messageType !== 'DATA_MESSAGE') return { records: 0 };
      const records: Record<string, unknown>[] = [];
      for (const line of batch.logEvents ?? []) {
        try {
          // Lambda prefixes lines written through console with a timestamp, request id and level; EMF lines are bare JSON.
          const start = line.message.indexOf('{');
          records.push(JSON.parse(start > 0 ? line.message.slice(start) : line.message));
        } catch {
          logger.warn('a log line that is not JSON reached the subscriber', { subscriber: subscriberId, eventId: line.id });
        }
      }
      await run(records);
      return { records: records.length };
    });
}
