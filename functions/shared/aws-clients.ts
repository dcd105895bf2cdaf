import type { DynamoDBClientConfig } from '@aws-sdk/client-dynamodb';

/**
 * What every AWS SDK client of the handlers is built with beyond its own settings: nothing on AWS.
 * The local runtime sets a signer here before any handler loads, because its stand-ins check no
 * signature and SigV4 would be CPU spent on every local request that Lambda's own hosts would
 * never measure against the service (see `lib/local/runtime.ts`).
 */
export const sdkClientDefaults: Pick<DynamoDBClientConfig, 'signer'> = {};
