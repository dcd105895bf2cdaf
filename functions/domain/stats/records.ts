import type { Figure } from '#domain/stats/counters';

/**
 * The figure an EMF record carries (`#shared/metrics`): its project, its instant and the values of
 * its metrics, with the request's latency apart (it goes to a histogram, not a counter).
 */
export function figureOfRecord(record: Readonly<Record<string, unknown>>): Figure | undefined {
  const projectId = record.projectId;
  const aws = record._aws as { Timestamp?: number; CloudWatchMetrics?: { Metrics?: { Name: string }[] }[] } | undefined;
  if (typeof projectId !== 'string' || !aws) return undefined;
  const counts: Record<string, number> = {};
  let latencyMs: number | undefined;
  for (const { Name } of aws.CloudWatchMetrics?.[0]?.Metrics ?? []) {
    const value = Number(record[Name]);
    if (!Number.isFinite(value)) continue;
    if (Name === 'request_latency') latencyMs = value;
    else counts[Name] = value;
  }
  return { projectId, at: Number(aws.Timestamp ?? Date.now()), counts, ...(latencyMs === undefined ? {} : { latencyMs }) };
}
