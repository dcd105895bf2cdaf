import type { SecretId } from '#wiring/bindings';
import { type DynamoDbLocal, startDynamoDbLocal } from '../dynamodb-local';
import type { HandlerHost } from '../handlers';
import { type S3Local, startS3Local } from '../s3-local';
import { type SecretsLocal, startSecretsLocal } from '../secrets-local';
import { type SesLocal, startSesLocal } from '../ses-local';
import { type SqsLocal, startSqsLocal } from '../sqs-local';
import { type LocalStepFunctions, startLocalStepFunctions } from '../step-functions';
import type { LocalCredentials } from './credentials';

export interface StandIns {
  readonly dynamo: DynamoDbLocal;
  readonly sqs: SqsLocal;
  readonly stepFunctions: LocalStepFunctions;
  readonly secrets: SecretsLocal;
  readonly ses: SesLocal;
  /** Absent when the run turns attachments off (`ATTACHMENTS_ENABLED=false`): no bucket is bound. */
  readonly s3?: S3Local;
}

/** The AWS stand-ins the handlers call, started side by side: none needs another. */
export async function startStandIns(options: {
  readonly repoRoot: string;
  readonly dataDir: string | undefined;
  readonly handlers: HandlerHost;
  readonly secretValues: Partial<Record<SecretId, string>>;
  readonly credentials: LocalCredentials;
  readonly attachments: boolean;
  /** The run's settings: the SQS stand-in leaves out subscribers whose feature they turn off. */
  readonly settings: Readonly<Record<string, string | undefined>>;
}): Promise<StandIns> {
  const [dynamo, sqs, stepFunctions, secrets, ses, s3] = await Promise.all([
    startDynamoDbLocal({ dataDir: options.dataDir }),
    startSqsLocal({ settings: options.settings }),
    startLocalStepFunctions({ repoRoot: options.repoRoot, handlers: options.handlers }),
    startSecretsLocal(options.secretValues),
    startSesLocal(),
    options.attachments ? startS3Local({ dataDir: options.dataDir, ...options.credentials }) : undefined,
  ]);
  return { dynamo, sqs, stepFunctions, secrets, ses, ...(s3 ? { s3 } : {}) };
}
