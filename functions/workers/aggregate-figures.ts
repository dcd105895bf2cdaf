import { aggregateFigures } from '#domain/stats/figures';
import { figureOfRecord } from '#domain/stats/records';
import { logSubscriptionHandler } from '#edge/log-subscription';

/** The functions' figures (EMF records naming a project), summed per project per minute, then the alert rules. */
export const handler = logSubscriptionHandler('FigureAggregator', (records) =>
  aggregateFigures(records.flatMap((record) => figureOfRecord(record) ?? [])),
);
