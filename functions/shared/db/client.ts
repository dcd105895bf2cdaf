import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { sdkClientDefaults } from '#shared/aws-clients';
import { boundIfSet } from '#shared/bindings';
import { captureClient } from '#shared/tracer';

/**
 * The one DynamoDB client of a function instance. The endpoint comes from the SDK's own
 * `AWS_ENDPOINT_URL_DYNAMODB` (set by the local runtime), so nothing here knows about local mode.
 * Exported raw as well, so a benchmark can count requests with SDK middleware. On AWS each call is
 * an X-Ray subsegment (`captureClient`).
 */
export const dynamo = captureClient(new DynamoDBClient({ maxAttempts: 3, ...sdkClientDefaults }));

export const db = DynamoDBDocumentClient.from(dynamo, {
  marshallOptions: {
    removeUndefinedValues: true,
    // Client JSON (event data, frames) may hold an object with a key `constructor`, which the
    // marshaller takes for a class instance and refuses unless told to write it as a map.
    convertClassInstanceToMap: true,
  },
});

/** Empty on functions without table access (they never send a table request). */
export const tableName = boundIfSet('table:read') ?? '';
