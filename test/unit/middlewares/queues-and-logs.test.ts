import type { Context, SQSEvent } from 'aws-lambda';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { sqsBatchHandler } from '#edge/sqs-batch';
import { wsHandler } from '#edge/ws';
import { logger } from '#shared/logger';

/**
 * Queue consumers report only the records that failed; every pipeline's log lines carry the
 * invocation's context and the request's keys, and lose the keys when it ends.
 */

const batch = (...bodies: string[]): SQSEvent => ({
  Records: bodies.map((body, index) => ({ messageId: `m-${index}`, body }) as SQSEvent['Records'][number]),
});

/** Log lines as JSON, captured from the console Powertools writes them to. */
function captureLogs() {
  logger.setLogLevel('INFO');
  // The unit project runs Powertools SILENT, and each invocation after the first restores that level.
  vi.spyOn(logger, 'refreshSampleRateCalculation').mockImplementation(() => undefined);
  const lines: Record<string, unknown>[] = [];
  const out = (logger as unknown as { console: Console }).console;
  for (const method of ['info', 'warn', 'error'] as const) {
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

describe('sqsBatchHandler', () => {
  it('reports only the records that failed, a body that is not JSON among them, each logged with its message id', async () => {
    // Prepare
    const logs = captureLogs();
    const handled: unknown[] = [];
    const handler = sqsBatchHandler('testing', async (body) => {
      if ((body as { fail?: boolean }).fail) throw new Error('this one fails');
      handled.push(body);
    });

    // Act
    const response = await handler(batch('{"n":1}', '{"fail":true}', 'not json', '{"n":2}'), {} as Context);

    // Assess
    expect(response).toEqual({ batchItemFailures: [{ itemIdentifier: 'm-1' }, { itemIdentifier: 'm-2' }] });
    expect(handled).toEqual([{ n: 1 }, { n: 2 }]);
    expect(logs.filter((line) => line.message === 'testing failed').map((line) => line.messageId)).toEqual(['m-1', 'm-2']);
  });
});

describe('observability', () => {
  it("puts the Lambda context and the request's keys on every line of the invocation, and only there", async () => {
    // Prepare
    const logs = captureLogs();
    const handler = wsHandler('$default', async () => {
      logger.info('inside');
      return { statusCode: 200 };
    });
    const context = { functionName: 'WsDefault', awsRequestId: 'aws-request-1' } as Context;

    // Act
    await handler({ requestContext: { connectionId: 'conn-1', requestId: 'req-1' } } as never, context);
    logger.info('after');

    // Assess
    expect(logs.find((line) => line.message === 'inside')).toMatchObject({
      traceId: 'req-1',
      connectionId: 'conn-1',
      route: '$default',
      function_name: 'WsDefault',
      function_request_id: 'aws-request-1',
    });
    expect(logs.find((line) => line.message === 'after')).not.toHaveProperty('traceId');
    expect(logs.find((line) => line.message === 'after')).not.toHaveProperty('connectionId');
  });
});
