import { startScheduledDigest } from '#domain/digest/run';
import { scheduleHandler } from '#edge/schedule';

/** 08:00 UTC: queues the first page of the day's digest run over every project. */
export const handler = scheduleHandler('DailyDigest', (at) => startScheduledDigest(at));
