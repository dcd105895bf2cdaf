import type { APIGatewayProxyEventV2, Context, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { httpHandler } from '#edge/http';
import { sqsBatchHandler } from '#edge/sqs-batch';
import { logger } from '#shared/logger';
import { currentTraceId } from '#shared/request-context';

/**
 * The trace id is current (`#shared/request-context`) wherever a pipeline's code runs, so domain
 * code reads it without a parameter and every log line carries it: one id per HTTP request, one
 * per queue record (the one the record carries), none once the invocation ended.
 */

function captureLogs() {
  logger.setLogLevel('DEBUG');
  vi.spyOn(logger, 'refreshSampleRateCalculation').mockImplementation(() => undefined);
  const lines: Record<string, unknown>[] = [];
  const out = (logger as unknown as { console: Console }).console;
  for (const method of ['debug', 'info', 'warn', 'error'] as const) {
    vi.spyOn(out, method).mockImplementation((line: string) => {
      lines.push(JSON.parse(line));
    });
  }
  return lines;
}

afterEach(() => {
  vi.restoreAllMocks();
  logger.setLogLevel('SILENT');
});

const httpEvent = (traceId: string) =>
  ({
    version: '2.0',
    routeKey: 'GET /health',
    rawPath: '/health',
    headers: { 'x-trace-id': traceId },
    requestContext: { http: { method: 'GET', sourceIp: '127.0.0.1' }, requestId: 'gateway-id' },
  }) as unknown as APIGatewayProxyEventV2;

describe('an HTTP request', () => {
  it('makes its trace id current for the code it runs and its log lines, and for nothing after it', async () => {
    // Prepare
    const logs = captureLogs();
    const seen: (string | undefined)[] = [];
    const handler = httpHandler('GetHealth', {}, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      seen.push(currentTraceId());
      logger.info('inside');
      return { status: 200, body: {} };
    });

    // Act
    await Promise.all([handler(httpEvent('trace-a'), {} as Context), handler(httpEvent('trace-b'), {} as Context)]);
    logger.info('after');

    // Assess
    expect(seen.sort()).toEqual(['trace-a', 'trace-b']);
    expect(
      logs
        .filter((line) => line.message === 'inside')
        .map((line) => line.traceId)
        .sort(),
    ).toEqual(['trace-a', 'trace-b']);
    expect(
      logs
        .filter((line) => line.message === 'request answered')
        .map((line) => line.traceId)
        .sort(),
    ).toEqual(['trace-a', 'trace-b']);
    expect(currentTraceId()).toBeUndefined();
    expect(logs.find((line) => line.message === 'after')).not.toHaveProperty('traceId');
  });
});

describe('a queue batch', () => {
  it('handles each record under the trace id it carries, or its message id', async () => {
    // Prepare
    const logs = captureLogs();
    const handler = sqsBatchHandler('tracing', async (body) => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      logger.info('record', { n: (body as { n: number }).n });
    });
    const records = [
      { messageId: 'm-1', body: '{"n":1}', messageAttributes: { traceId: { stringValue: 'from-request-1', dataType: 'String' } } },
      { messageId: 'm-2', body: '{"n":2}', messageAttributes: {} },
      { messageId: 'm-3', body: '{"n":3}', messageAttributes: { traceId: { stringValue: 'bad"id', dataType: 'String' } } },
    ];

    // Act
    await handler({ Records: records } as unknown as SQSEvent, { awsRequestId: 'lambda-id' } as Context);

    // Assess
    const byRecord = Object.fromEntries(logs.filter((line) => line.message === 'record').map((line) => [line.n, line.traceId]));
    expect(byRecord).toEqual({ 1: 'from-request-1', 2: 'm-2', 3: 'm-3' });
  });
});
