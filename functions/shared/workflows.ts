import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { sdkClientDefaults } from '#shared/aws-clients';
import { bound } from '#shared/bindings';
import { captureClient } from '#shared/tracer';

let client: SFNClient | undefined;

/**
 * Starts a Step Functions execution of the webhook retry state machine. The endpoint comes from the
 * SDK's resolution (`AWS_ENDPOINT_URL_SFN` for the local interpreter).
 */
export async function startWebhookRetry(input: Record<string, unknown>, name?: string): Promise<string> {
  client ??= captureClient(new SFNClient({ maxAttempts: 3, ...sdkClientDefaults }));
  const { executionArn } = await client.send(
    new StartExecutionCommand({
      stateMachineArn: bound('stateMachine:WebhookRetry'),
      input: JSON.stringify(input),
      ...(name ? { name } : {}),
    }),
  );
  return executionArn ?? '';
}
