import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';
import type { SQSClientConfig } from '@aws-sdk/client-sqs';
import { logger } from '#shared/logger';

type SdkLogger = NonNullable<DynamoDBClientConfig['logger']>;

/**
 * The SDK's logger middleware filters every call's input and output for sensitive fields and hands
 * them to `logger.info`, even when the logger drops them, as the default one does. It calls
 * `logger?.info?.(...)`, so a logger without `info` (or `error`: our own code logs what it catches)
 * skips that work, a few percent of every call's CPU. The SDK's warnings (clock skew,
 * deprecations) still reach the log.
 */
export const quietSdkLogger = {
  debug: () => undefined,
  warn: (...content: unknown[]) => logger.warn('aws-sdk', { content }),
} as unknown as SdkLogger;

/**
 * What every AWS SDK client of the handlers is built with beyond its own settings: the quiet
 * logger, and locally a signer. The local runtime sets that signer here before any handler loads,
 * because its stand-ins check no signature and SigV4 would be CPU spent on every local request that
 * Lambda's own hosts would never measure against the service (see `lib/local/runtime.ts`).
 */
export const sdkClientDefaults: Pick<DynamoDBClientConfig, 'signer' | 'logger'> = { logger: quietSdkLogger };

/**
 * The handlers' SQS client's settings beyond those: nothing on AWS; locally the runtime sets a
 * request handler that answers in this process, where the SQS stand-in runs, without a socket.
 */
export const sqsClientDefaults: Pick<SQSClientConfig, 'requestHandler'> = {};
