import { randomUUID } from 'node:crypto';
import { type SecretId, secretDefinitions } from '#wiring/bindings';
import { AwsJsonError, serveAwsJson } from './aws-json';
import { LOCAL_REGION } from './sqs-local';

export const localSecretArn = (secretId: string) => `arn:aws:secretsmanager:${LOCAL_REGION}:000000000000:secret:chat-${secretId}`;

export interface SecretsLocal {
  readonly endpoint: string;
  /** Secret ARN by secret id, for every secret of `functions/wiring/bindings.ts`, set or not. */
  readonly arns: Readonly<Record<SecretId, string>>;
  stop(): Promise<void>;
}

/**
 * The Secrets Manager stand-in: `GetSecretValue` in the service's JSON protocol for the real
 * `SecretsManagerClient`, on loopback. Each secret of `functions/wiring/bindings.ts` holds the value of its
 * setting (`CHAT_OPERATOR_KEY`, `WEBHOOK_SECRET_ENCRYPTION_KEY`) from `values`; an unset one does
 * not exist (`ResourceNotFoundException`), which is how a local run goes without it.
 */
export async function startSecretsLocal(values: Readonly<Partial<Record<SecretId, string>>>): Promise<SecretsLocal> {
  const arns = Object.fromEntries(Object.keys(secretDefinitions).map((secretId) => [secretId, localSecretArn(secretId)])) as Record<
    SecretId,
    string
  >;
  const byArn = new Map(
    Object.entries(values).flatMap(([secretId, value]) => (value === undefined ? [] : [[arns[secretId as SecretId], { secretId, value }]])),
  );
  const versionId = randomUUID();
  const server = await serveAwsJson('1.1', {
    'secretsmanager.GetSecretValue': (body) => {
      const requested = String(body.SecretId ?? '');
      const found = byArn.get(requested);
      if (!found) throw new AwsJsonError('ResourceNotFoundException', "Secrets Manager can't find the specified secret.");
      return {
        ARN: requested,
        Name: `chat-${found.secretId}`,
        SecretString: found.value,
        VersionId: versionId,
        VersionStages: ['AWSCURRENT'],
        CreatedDate: Date.now() / 1000,
      };
    },
  });
  return { endpoint: server.endpoint, arns, stop: server.close };
}
