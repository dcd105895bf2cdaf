/**
 * The registry of resource kinds a function may be bound to. A wiring-table entry lists its
 * bindings (`table:read`, `queue:Realtime`, `secret:webhook-key`, ...); for each kind this module
 * says, in one entry:
 * - the environment variable that carries the resource to the handler,
 * - the least-privilege grant on AWS (made through {@link GrantContext}, so this file imports no CDK
 *   code: handlers bundle it to find their variables),
 * - the value the local runtime gives that variable (its stand-in).
 *
 * Adding a kind of resource is one entry in {@link bindingKinds}; `ChatFunction.bind`, the local
 * runtime and `functions/shared/bindings.ts` follow.
 */
import type { WebSocketStage } from 'aws-cdk-lib/aws-apigatewayv2';
import type { ITableV2 } from 'aws-cdk-lib/aws-dynamodb';
import type { Grant } from 'aws-cdk-lib/aws-iam';
import type { IBucket } from 'aws-cdk-lib/aws-s3';
import type { ISecret } from 'aws-cdk-lib/aws-secretsmanager';
import type { ITopic } from 'aws-cdk-lib/aws-sns';
import type { IQueue } from 'aws-cdk-lib/aws-sqs';
import type { IStateMachine } from 'aws-cdk-lib/aws-stepfunctions';

/**
 * Secrets the service reads at run time. On AWS the root stack creates each in Secrets Manager
 * (generated there, so no key passes through context, template or assembly) and bound functions
 * get its ARN and `secretsmanager:GetSecretValue` on it; locally the secrets stand-in serves the
 * value of `setting` from the environment (unset: the secret does not exist).
 */
export const secretDefinitions = {
  'operator-key': {
    setting: 'CHAT_OPERATOR_KEY',
    summary: 'Operator key of the /platform routes (X-Service-Operator-Key)',
    generate: { length: 48, hexOnly: false },
    // Losing it costs nothing: the operator reads the new one from Secrets Manager.
    retain: false,
  },
  'webhook-key': {
    setting: 'WEBHOOK_SECRET_ENCRYPTION_KEY',
    summary:
      'AES-256 key (64 hex characters, or a key ring while rotating) that encrypts webhook signing secrets and push provider keys in the table',
    generate: { length: 64, hexOnly: true },
    // Without it the stored webhook secrets cannot be opened: it lives as long as the table.
    retain: true,
  },
  'signing-key': {
    setting: 'SIGNING_SECRET_ENCRYPTION_KEY',
    summary:
      'AES-256 key (64 hex characters, or a key ring while rotating) that encrypts the keys the service generates: project JWT signing secrets and VAPID private keys',
    generate: { length: 64, hexOnly: true },
    // Without it no user token verifies: it lives as long as the table.
    retain: true,
  },
  'fcm-legacy-key': {
    setting: 'FCM_SERVER_KEY',
    summary:
      'Global FCM legacy server key, for projects without a legacy key of their own; the operator puts it (it holds `unset` until then)',
    // A provider's key cannot be generated: the secret starts as the placeholder and the operator
    // puts the real key with `aws secretsmanager put-secret-value`.
    generate: undefined,
    retain: false,
  },
  'ai-key': {
    setting: 'AI_API_KEY',
    summary: 'API key of the OpenAI-compatible AI provider (AI_BASE_URL); the operator puts it (it holds `unset` until then)',
    generate: undefined,
    retain: false,
  },
  'calls-secret': {
    setting: 'CALLS_API_SECRET',
    summary:
      'API secret of the LiveKit-compatible call server (CALLS_SERVER_URL, CALLS_API_KEY) that signs call tokens; the operator puts it (it holds `unset` until then)',
    generate: undefined,
    retain: false,
  },
  // Not `marketplace-audit`: its ARN variable, MARKETPLACE_AUDIT_SECRET_ARN, would spell the setting's name.
  'marketplace-signing': {
    setting: 'MARKETPLACE_AUDIT_SECRET',
    summary:
      'Shared secret the marketplace signs POST /internal/marketplace/audit-result with (X-Service-Signature); the operator puts it (it holds `unset` until then, and the route answers 503)',
    generate: undefined,
    retain: false,
  },
  'origin-verify': {
    setting: 'EDGE_ORIGIN_SECRET',
    summary: 'Value CloudFront sends as x-origin-verify to the APIs (edge: true); requests without it are refused',
    generate: { length: 48, hexOnly: false },
    // CloudFront and the functions read it from Secrets Manager each deploy: a new one costs nothing.
    retain: false,
  },
} as const;

/** What an operator-provided secret holds until the operator puts the real value: read as "not set". */
export const UNSET_SECRET_PLACEHOLDER = 'unset';
export type SecretId = keyof typeof secretDefinitions;

/**
 * Hosts the service calls out to, whose base URL is a setting so that tests point them at local
 * servers speaking the real protocol. The defaults are the real hosts; an entry without one is
 * off until configured.
 */
export const outboundHosts = {
  fcm: { setting: 'FCM_BASE_URL', default: 'https://fcm.googleapis.com', summary: 'FCM HTTP v1 and legacy send' },
  'google-oauth': {
    setting: 'GOOGLE_OAUTH_BASE_URL',
    default: 'https://oauth2.googleapis.com',
    summary: 'OAuth 2.0 token endpoint for FCM',
  },
  apns: { setting: 'APNS_BASE_URL', default: 'https://api.push.apple.com', summary: 'APNs HTTP/2, production' },
  'apns-sandbox': { setting: 'APNS_SANDBOX_BASE_URL', default: 'https://api.sandbox.push.apple.com', summary: 'APNs HTTP/2, sandbox' },
  slack: { setting: 'SLACK_API_BASE_URL', default: 'https://slack.com', summary: 'Slack Web API (chat.postMessage), for bridges' },
  discord: {
    setting: 'DISCORD_API_BASE_URL',
    default: 'https://discord.com/api/v10',
    summary: 'Discord HTTP API (webhook execute, channel messages), for bridges',
  },
  ai: { setting: 'AI_BASE_URL', default: undefined, summary: 'OpenAI-compatible chat completions; unset means AI is not configured' },
} as const satisfies Record<string, { setting: string; default: string | undefined; summary: string }>;
export type OutboundHostId = keyof typeof outboundHosts;

export type Binding =
  | 'table:read'
  | 'table:write'
  | `queue:${string}`
  | 'events:publish'
  | `stateMachine:${string}`
  | `secret:${SecretId}`
  | 'connections:manage'
  | `outbound:${OutboundHostId}`
  | 'email:digest'
  | 'link:api'
  | `bucket:${BucketId}:${'read' | 'write'}`;

/**
 * The S3 buckets of the service. A deployment may leave one out (its `enabledBy` setting `false`):
 * bound functions then get no variable and answer 503 with the bucket's `missingCode`.
 */
export const bucketDefinitions = {
  attachments: {
    variable: 'ATTACHMENTS_BUCKET',
    enabledBy: 'ATTACHMENTS_ENABLED',
    summary: 'Uploaded files and voice messages (POST /upload, POST /messages/voice)',
  },
} as const;
export type BucketId = keyof typeof bucketDefinitions;

/**
 * S3 actions per direction on the bucket's objects. `read` lists too (the GDPR export lists a
 * subject's uploads under their prefix); `write` deletes (GDPR erasure) and lists what it deletes.
 */
export const bucketActions = {
  read: { objects: ['s3:GetObject'], bucket: ['s3:ListBucket'] },
  write: { objects: ['s3:PutObject', 's3:DeleteObject', 's3:GetObject'], bucket: ['s3:ListBucket'] },
} as const;

/** The AWS resources bindings name, as the stack building a function sees them (shared or of its own area). */
export interface BoundResources {
  readonly table: ITableV2;
  /** The table's global secondary indexes, granted by name rather than `index/*`. */
  readonly indexNames: readonly string[];
  queue(id: string): IQueue;
  readonly eventTopic: ITopic;
  stateMachine(id: string): IStateMachine;
  secret(id: SecretId): ISecret;
  readonly webSocketStage: WebSocketStage;
  /** The HTTP API's base URL (its `$default` stage), for links the service writes into what it sends. */
  readonly httpApiUrl: string;
  /** A bucket of the service; `undefined` when the deployment leaves it out. */
  bucket(id: BucketId): IBucket | undefined;
}

/** How a kind grants: everything a grant needs, handed in by `ChatFunction.bind`. */
export interface GrantContext {
  readonly resources: BoundResources;
  /** Deploy-time settings (CDK context), for kinds whose value is a setting (provider base URLs). */
  readonly settings: Readonly<Record<string, string | undefined>>;
  /** The function, for L2 grant methods (`queue.grantSendMessages(context.grantee)`). */
  readonly grantee: import('aws-cdk-lib/aws-iam').IGrantable;
  /**
   * Adds one statement allowing exactly `actions` on exactly `resourceArns` to the function's role;
   * `wildcardReason` acknowledges the cdk-nag findings of the wildcards in those ARNs (objects of one bucket).
   */
  allow(actions: readonly string[], resourceArns: readonly string[], wildcardReason?: string): void;
  /** Acknowledges the cdk-nag wildcard findings (resources, actions) of an L2 grant that cannot avoid them, with the reason. */
  acknowledgeWildcards(grant: Grant, reason: string): void;
  /** Acknowledges one cdk-nag finding on the function's role, with the reason. */
  acknowledgeFinding(findingId: string, reason: string): void;
  /** An ARN in the function's own partition, region and account (`Stack.formatArn`). */
  arnOf(service: string, resource: string): string;
}

/** What the local runtime's stand-ins give bindings. */
export interface LocalStandIns {
  readonly tableName: string;
  readonly queueUrls: Readonly<Record<string, string>>;
  readonly eventTopicArn: string;
  readonly stateMachineArns: Readonly<Record<string, string>>;
  readonly secretArns: Readonly<Record<string, string>>;
  /** Base URL of the gateway's `@connections` API. */
  readonly connectionsEndpoint: string;
  /** The settings the runtime was started with (provider URLs). */
  readonly settings: Readonly<Record<string, string | undefined>>;
  /** Base URL of the local gateway, which serves the HTTP API. */
  readonly apiBaseUrl: string;
  /** The S3 stand-in's bucket names; a bucket the runtime did not create is absent. */
  readonly buckets: Readonly<Partial<Record<BucketId, string>>>;
}

interface BindingKind {
  readonly summary: string;
  /** Whether `parameter` names something this kind can bind (checked over the whole wiring table). */
  accepts(parameter: string): boolean;
  /** The environment variable that carries the bound resource. */
  variable(parameter: string): string;
  /** Grants the least privilege on AWS and returns the variable's value; `undefined` leaves it unset. */
  grant(parameter: string, context: GrantContext): string | undefined;
  /** The variable's value in the local runtime; `undefined` leaves it unset. */
  local(parameter: string, standIns: LocalStandIns): string | undefined;
}

const upperSnake = (name: string) =>
  name
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .replace(/[^A-Za-z0-9]+/g, '_')
    .toUpperCase();

/** DynamoDB data-plane actions per direction: no Scan, no stream reads, no table administration. */
export const tableActions = {
  read: ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:ConditionCheckItem'],
  write: ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem', 'dynamodb:BatchWriteItem'],
} as const;

export const bindingKinds = {
  table: {
    summary: 'The single table: read (Get, BatchGet, Query on the table and its indexes) and/or write (Put, Update, Delete, BatchWrite)',
    accepts: (parameter) => parameter === 'read' || parameter === 'write',
    variable: () => 'TABLE_NAME',
    grant(parameter, { resources, allow }) {
      const { table, indexNames } = resources;
      // Named indexes instead of index/*: least privilege, and no wildcard to acknowledge.
      allow(tableActions[parameter as 'read' | 'write'], [table.tableArn, ...indexNames.map((name) => `${table.tableArn}/index/${name}`)]);
      return table.tableName;
    },
    local: (_, standIns) => standIns.tableName,
  },
  queue: {
    summary: 'Send to one queue of the wiring table (sqs:SendMessage on that queue only)',
    accepts: () => true,
    variable: (queueId) => `${upperSnake(queueId)}_QUEUE_URL`,
    grant(queueId, { resources, grantee }) {
      const queue = resources.queue(queueId);
      queue.grantSendMessages(grantee);
      return queue.queueUrl;
    },
    local: (queueId, standIns) => standIns.queueUrls[queueId],
  },
  events: {
    summary: 'Publish to the domain event fan-out topic (the event publisher only)',
    accepts: (parameter) => parameter === 'publish',
    variable: () => 'EVENTS_TOPIC_ARN',
    grant(_, { resources, grantee, acknowledgeFinding }) {
      resources.eventTopic.grantPublish(grantee);
      acknowledgeFinding(
        'AwsSolutions-IAM5[Action::kms:GenerateDataKey*]',
        "The L2 grantPublish of an encrypted topic adds kms:GenerateDataKey* on the topic's own key only: publishing " +
          'generates a data key (GenerateDataKey, GenerateDataKeyWithoutPlaintext).',
      );
      return resources.eventTopic.topicArn;
    },
    local: (_, standIns) => standIns.eventTopicArn,
  },
  stateMachine: {
    summary: 'Start executions of one state machine of the same area',
    accepts: () => true,
    variable: (machineId) => `${upperSnake(machineId)}_STATE_MACHINE_ARN`,
    grant(machineId, { resources, grantee }) {
      const machine = resources.stateMachine(machineId);
      machine.grantStartExecution(grantee);
      return machine.stateMachineArn;
    },
    local: (machineId, standIns) => standIns.stateMachineArns[machineId],
  },
  secret: {
    summary: 'Read one secret at run time (secretsmanager:GetSecretValue on it; the value is never configuration)',
    accepts: (secretId) => secretId in secretDefinitions,
    variable: (secretId) => `${upperSnake(secretId)}_SECRET_ARN`,
    grant(secretId, { resources, grantee }) {
      const secret = resources.secret(secretId as SecretId);
      secret.grantRead(grantee);
      return secret.secretArn;
    },
    local: (secretId, standIns) => standIns.secretArns[secretId],
  },
  connections: {
    summary: "Post to and close the WebSocket stage's connections (execute-api:ManageConnections on its @connections)",
    accepts: (parameter) => parameter === 'manage',
    variable: () => 'CONNECTIONS_ENDPOINT',
    grant(_, { resources, grantee, acknowledgeWildcards }) {
      const stage = resources.webSocketStage;
      acknowledgeWildcards(
        stage.grantManagementApiAccess(grantee),
        'execute-api:ManageConnections on "<api>/<stage>/*/@connections/*": connection ids are created at runtime by ' +
          'API Gateway, so the ARN cannot name them; it is limited to this API and stage.',
      );
      return stage.callbackUrl;
    },
    local: (_, standIns) => standIns.connectionsEndpoint,
  },
  outbound: {
    summary: 'Call one provider host; its base URL is a setting whose default is the real host (no IAM grant)',
    accepts: (hostId) => hostId in outboundHosts,
    variable: (hostId) => outboundHosts[hostId as OutboundHostId].setting,
    grant(hostId, { settings }) {
      const host = outboundHosts[hostId as OutboundHostId];
      return settings[host.setting] ?? host.default;
    },
    local(hostId, standIns) {
      const host = outboundHosts[hostId as OutboundHostId];
      return standIns.settings[host.setting] ?? host.default;
    },
  },
  email: {
    summary:
      "Send e-mail through Amazon SES v2 from the sender identity a setting names (ses:SendEmail on that identity's ARN only); unset: no grant, no e-mail",
    accepts: (parameter) => parameter === 'digest',
    variable: () => 'DIGEST_EMAIL_FROM',
    grant(_, { settings, allow, arnOf }) {
      const from = settings.DIGEST_EMAIL_FROM;
      if (!from) return undefined;
      // SES authorizes a send on the verified identity: the address itself, or its domain when the domain is the identity.
      allow(['ses:SendEmail'], [arnOf('ses', `identity/${settings.DIGEST_EMAIL_IDENTITY ?? from}`)]);
      return from;
    },
    local: (_, standIns) => standIns.settings.DIGEST_EMAIL_FROM ?? 'digest@chat.local',
  },
  link: {
    summary: 'The public base URL of the HTTP API, for links written into e-mails (no IAM grant)',
    accepts: (parameter) => parameter === 'api',
    variable: () => 'PUBLIC_API_URL',
    grant: (_, { resources }) => resources.httpApiUrl,
    local: (_, standIns) => standIns.settings.PUBLIC_API_URL ?? standIns.apiBaseUrl,
  },
  bucket: {
    summary:
      'One S3 bucket: read (GetObject on its objects, ListBucket on it) or write (also PutObject, DeleteObject); unset when the deployment leaves the bucket out',
    accepts: (parameter) => {
      const [bucketId, access, ...rest] = parameter.split(':');
      return rest.length === 0 && bucketId !== undefined && bucketId in bucketDefinitions && (access === 'read' || access === 'write');
    },
    variable: (parameter) => bucketDefinitions[parameter.split(':')[0] as BucketId].variable,
    grant(parameter, { resources, allow }) {
      const [bucketId, access] = parameter.split(':') as [BucketId, 'read' | 'write'];
      const bucket = resources.bucket(bucketId);
      if (!bucket) return undefined;
      // Explicit statements rather than bucket.grantReadWrite, which adds s3:*Object*, Abort and tagging actions too.
      allow(
        bucketActions[access].objects,
        [bucket.arnForObjects('*')],
        "Objects of this one bucket: their keys are made at run time (a project's prefix, an unguessable id), so the ARN cannot name them.",
      );
      allow(bucketActions[access].bucket, [bucket.bucketArn]);
      return bucket.bucketName;
    },
    local: (parameter, standIns) => standIns.buckets[parameter.split(':')[0] as BucketId],
  },
} as const satisfies Record<string, BindingKind>;

export type BindingKindId = keyof typeof bindingKinds;

/** The kind and parameter of a binding: `queue:Realtime` → `{ kind: queue, parameter: 'Realtime' }`. */
export function parseBinding(binding: Binding): { kindId: BindingKindId; kind: BindingKind; parameter: string } {
  const separator = binding.indexOf(':');
  const kindId = binding.slice(0, separator) as BindingKindId;
  const parameter = binding.slice(separator + 1);
  const kind: BindingKind | undefined = bindingKinds[kindId];
  if (!kind?.accepts(parameter)) throw new Error(`Unknown binding ${binding} (functions/wiring/bindings.ts)`);
  return { kindId, kind, parameter };
}

/** The environment variable a binding sets. */
export const bindingVariable = (binding: Binding): string => {
  const { kind, parameter } = parseBinding(binding);
  return kind.variable(parameter);
};
