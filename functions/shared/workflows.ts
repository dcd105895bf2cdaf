import { SFNClient, StartExecutionCommand } from '@aws-sdk/client-sfn';
import { config } from '#shared/config';

let client: SFNClient | undefined;

/**
 * Starts a Step Functions execution of the webhook retry state machine. The endpoint comes from the
 * SDK's resolution (`AWS_ENDPOINT_URL_SFN` for the local interpreter).
 */
export async function startWebhookRetry(input: Record<string, unknown>, name?: string): Promise<string> {
  if (!config.WEBHOOK_STATE_MACHINE_ARN) throw new Error('WEBHOOK_STATE_MACHINE_ARN is not set for this function');
  client ??= new SFNClient({ maxAttempts: 3 });
  const { executionArn } = await client.send(
    new StartExecutionCommand({
      stateMachineArn: config.WEBHOOK_STATE_MACHINE_ARN,
      input: JSON.stringify(input),
      ...(name ? { name } : {}),
    }),
  );
  return executionArn ?? '';
}
