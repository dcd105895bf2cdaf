import { randomUUID } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type SecretId, secretDefinitions } from '../bindings';
import { readAwsJson, sendAwsJson } from './aws-json';
import { LOCAL_REGION } from './sqs-local';

export const localSecretArn = (secretId: string) => `arn:aws:secretsmanager:${LOCAL_REGION}:000000000000:secret:chat-${secretId}`;

export interface SecretsLocal {
  readonly endpoint: string;
  /** Secret ARN by secret id, for every secret of `lib/bindings.ts`, set or not. */
  readonly arns: Readonly<Record<SecretId, string>>;
  stop(): Promise<void>;
}

const sendJson = (response: ServerResponse, status: number, body: unknown, errorType?: string) =>
  sendAwsJson(response, '1.1', status, body, errorType);

/**
 * The Secrets Manager stand-in: `GetSecretValue` in the service's JSON protocol for the real
 * `SecretsManagerClient`, on loopback. Each secret of `lib/bindings.ts` holds the value of its
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
  const server = createServer((request, response) => {
    const target = String(request.headers['x-amz-target'] ?? '');
    readAwsJson(request)
      .then((body) => {
        if (target !== 'secretsmanager.GetSecretValue') {
          return sendJson(response, 400, { message: `Unsupported operation ${target}` }, 'UnknownOperationException');
        }
        const requested = String(body.SecretId ?? '');
        const found = byArn.get(requested);
        if (!found)
          return sendJson(response, 400, { message: "Secrets Manager can't find the specified secret." }, 'ResourceNotFoundException');
        sendJson(response, 200, {
          ARN: requested,
          Name: `chat-${found.secretId}`,
          SecretString: found.value,
          VersionId: versionId,
          VersionStages: ['AWSCURRENT'],
          CreatedDate: Date.now() / 1000,
        });
      })
      .catch((error: Error) => sendJson(response, 400, { message: error.message }, 'SerializationException'));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    arns,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
