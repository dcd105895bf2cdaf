import { randomUUID } from 'node:crypto';
import { dynamo } from '#shared/db/client';

/** One request the domain's DynamoDB client sent: its command and the partition key it names, if one. */
export interface DynamoRequest {
  readonly command: string;
  readonly pk?: string;
  /** The partition a Query reads (its `:pk` value), kept apart from `pk` so that filters on `pk` see keyed requests only. */
  readonly queried?: string;
}

/**
 * The requests the domain's DynamoDB client (the one every handler of this process shares) sends
 * while `work` runs, read by a middleware of the real SDK client: what the tests of a path's cost
 * count, without a stand-in client.
 */
export async function dynamoRequestsOf(work: () => Promise<unknown>): Promise<DynamoRequest[]> {
  const sent: DynamoRequest[] = [];
  const name = `record-${randomUUID()}`;
  dynamo.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { pk?: unknown }; Item?: { pk?: unknown }; ExpressionAttributeValues?: { ':pk'?: unknown } };
      const pk = input.Key?.pk ?? input.Item?.pk;
      const command = String(context.commandName).replace(/Command$/, '');
      const queried = command === 'Query' ? input.ExpressionAttributeValues?.[':pk'] : undefined;
      sent.push({
        command,
        ...(pk === undefined ? {} : { pk: String(pk) }),
        ...(queried === undefined ? {} : { queried: String(queried) }),
      });
      return next(args);
    },
    { step: 'initialize', name },
  );
  try {
    await work();
  } finally {
    dynamo.middlewareStack.remove(name);
  }
  return sent;
}
