import { functionEntries } from '#wiring';
import { bindingVariable, type LocalStandIns, parseBinding } from '#wiring/bindings';
import { LOCAL_REGION } from '../sqs-local';
import type { LocalCredentials } from './credentials';
import type { StandIns } from './stand-ins';

/**
 * The variables the handlers run with: the stand-ins' endpoints, every binding's value, the local
 * defaults, and last the given settings, which win over all of them.
 */
export function handlerEnv(input: {
  readonly credentials: LocalCredentials;
  readonly standIns: StandIns;
  /** The event fan-out's switch, in front of the SQS/SNS stand-in. */
  readonly fanOutEndpoint: string;
  readonly bindings: LocalStandIns;
  readonly settings: Readonly<Record<string, string>>;
}): Record<string, string> {
  const { dynamo, sqs, stepFunctions, secrets, ses, s3 } = input.standIns;
  return {
    AWS_REGION: LOCAL_REGION,
    AWS_ACCESS_KEY_ID: input.credentials.accessKeyId,
    AWS_SECRET_ACCESS_KEY: input.credentials.secretAccessKey,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: sqs.endpoint,
    // Only the event publisher talks to SNS: through the switch, so the fan-out can be taken down.
    AWS_ENDPOINT_URL_SNS: input.fanOutEndpoint,
    AWS_ENDPOINT_URL_SFN: stepFunctions.endpoint,
    AWS_ENDPOINT_URL_SECRETS_MANAGER: secrets.endpoint,
    AWS_ENDPOINT_URL_SESV2: ses.endpoint,
    ...(s3 ? { AWS_ENDPOINT_URL_S3: s3.endpoint } : {}),
    ...bindingVariables(input.bindings),
    // Webhook receivers on one machine live on loopback.
    WEBHOOK_ALLOW_PRIVATE_TARGETS: 'true',
    POWERTOOLS_LOG_LEVEL: process.env.POWERTOOLS_LOG_LEVEL ?? 'WARN',
    ...input.settings,
  };
}

/** The variable of every binding in the wiring table, with its stand-in's value. */
function bindingVariables(standIns: LocalStandIns): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const entry of functionEntries) {
    for (const binding of entry.bindings) {
      const { kind, parameter } = parseBinding(binding);
      const value = kind.local(parameter, standIns);
      if (value !== undefined) variables[kind.variable(parameter)] = value;
    }
  }
  return variables;
}

/** Every variable a binding of the wiring table can set. */
const bindingVariableNames = new Set(functionEntries.flatMap((entry) => entry.bindings.map((binding) => bindingVariable(binding))));

/**
 * Handlers read `process.env` when first imported, so this runs before any of them loads. A binding
 * this run leaves unset (the attachments bucket with `ATTACHMENTS_ENABLED=false`) must not be found
 * in the environment the runtime was started from (a test process that talks to another runtime).
 */
export function applyToProcess(env: Readonly<Record<string, string>>): void {
  for (const name of [...bindingVariableNames, 'AWS_ENDPOINT_URL_S3']) if (!(name in env)) delete process.env[name];
  Object.assign(process.env, env);
  // Credentials from the user's AWS profile must not leak into local requests.
  delete process.env.AWS_SESSION_TOKEN;
  delete process.env.AWS_PROFILE;
}
