import type { SecretId } from '#wiring/bindings';
import { type DynamoDbLocal, startDynamoDbLocal } from '../dynamodb-local';
import type { HandlerHost } from '../handlers';
import { type SecretsLocal, startSecretsLocal } from '../secrets-local';
import { type SesLocal, startSesLocal } from '../ses-local';
import { type SqsLocal, startSqsLocal } from '../sqs-local';
import { type LocalStepFunctions, startLocalStepFunctions } from '../step-functions';

export interface StandIns {
  readonly dynamo: DynamoDbLocal;
  readonly sqs: SqsLocal;
  readonly stepFunctions: LocalStepFunctions;
  readonly secrets: SecretsLocal;
  readonly ses: SesLocal;
}

/** The AWS stand-ins the handlers call, started side by side: none needs another. */
export async function startStandIns(options: {
  readonly repoRoot: string;
  readonly dataDir: string | undefined;
  readonly handlers: HandlerHost;
  readonly secretValues: Partial<Record<SecretId, string>>;
}): Promise<StandIns> {
  const [dynamo, sqs, stepFunctions, secrets, ses] = await Promise.all([
    startDynamoDbLocal({ dataDir: options.dataDir }),
    startSqsLocal(),
    startLocalStepFunctions({ repoRoot: options.repoRoot, handlers: options.handlers }),
    startSecretsLocal(options.secretValues),
    startSesLocal(),
  ]);
  return { dynamo, sqs, stepFunctions, secrets, ses };
}
