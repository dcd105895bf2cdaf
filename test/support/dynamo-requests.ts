import { randomUUID } from 'node:crypto';
import { dynamo } from '#shared/db/client';

/** One request the domain's DynamoDB client sent: its command and the partition key it names, if one. */
export interface DynamoRequest {
  readonly command: string;
  readonly pk?: string;
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
      const input = args.input as { Key?: { pk?: unknown }; Item?: { pk?: unknown } };
      const pk = input.Key?.pk ?? input.Item?.pk;
      sent.push({ command: String(context.commandName).replace(/Command$/, ''), ...(pk === undefined ? {} : { pk: String(pk) }) });
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
