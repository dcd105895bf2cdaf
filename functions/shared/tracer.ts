import { Tracer } from '@aws-lambda-powertools/tracer';

/**
 * One Powertools Tracer per function instance. It traces only inside Lambda with active tracing
 * (ChatFunction turns it on); elsewhere (the local runtime, tests) it is off by its own default,
 * or by `POWERTOOLS_TRACE_ENABLED=false`, and each of its calls returns at once.
 */
export const tracer = new Tracer({ serviceName: process.env.POWERTOOLS_SERVICE_NAME ?? 'chat' });

/**
 * An AWS SDK client whose calls appear as X-Ray subsegments (DynamoDB, SQS, SNS, Step Functions)
 * when tracing is on; the client itself, untouched, when it is off.
 */
export const captureClient = <T>(client: T): T => tracer.captureAWSv3Client(client);
