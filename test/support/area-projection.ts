/**
 * The wiring table projected to a larger size, to prove the stacks' headroom before the areas still
 * to come land (docs: ARCHITECTURE.md, "Stacks"): `projectedAreas(n)` generates `n` HTTP routes over
 * those areas with realistic bindings and a few event subscribers, and `synthesizeStacks` builds the
 * CDK app (bundling skipped) and measures every template of its cloud assembly. Used by
 * `test/infra/stack-limits.test.ts` and by benchmarks that print resources per stack.
 *
 * Handler paths point at existing handler files so that `NodejsFunction` finds its entry; the
 * projected functions are never bundled or run.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import type { Area, AuthKind, EventSubscriber, HttpMethod, HttpRoute } from '#wiring';
import type { Binding } from '#wiring/bindings';
import { repoRoot } from '../../lib/constructs/chat-function.ts';
import { type ChatAppOptions, createChatApp } from '../../lib/stacks/chat-app.ts';

/** CloudFormation's limits are 500 resources, 1 MB of template, 200 parameters and 200 outputs; the guard keeps a margin on the first two. */
export const stackLimits = { resources: 400, templateBytes: 800 * 1024, parameters: 200, outputs: 200 } as const;

/** A collection an area serves: `/<area>/<segment>` and `/<area>/<segment>/{<param>}`. */
interface Collection {
  readonly one: string;
  readonly many: string;
  readonly segment: string;
  readonly param: string;
  /** @default the area's */
  readonly auth?: AuthKind;
  /** What writes bind besides the table. @default the area's `writes` */
  readonly writes?: readonly Binding[];
}

interface FutureArea {
  readonly id: string;
  readonly summary: string;
  readonly auth: AuthKind;
  readonly collections: readonly Collection[];
  /** What writes (POST, PATCH, DELETE) bind besides the table. */
  readonly writes: readonly Binding[];
  readonly subscribers: readonly Pick<EventSubscriber, 'id' | 'eventTypes' | 'bindings' | 'summary'>[];
}

const collection = (one: string, many: string, extra: Partial<Collection> = {}): Collection => ({
  one,
  many,
  segment: many.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase(),
  param: `${one.charAt(0).toLowerCase()}${one.slice(1)}Id`,
  ...extra,
});

const readWrite: readonly Binding[] = ['table:read', 'table:write'];

/** The areas still to come, in the order routes are dealt to them. */
export const futureAreas: readonly FutureArea[] = [
  {
    // The Push area itself has landed (functions/wiring/push.ts); this one stands for what push still grows into.
    id: 'PushTopics',
    summary: 'Push topics, preferences and delivery receipts',
    auth: 'userOrService',
    collections: [
      collection('Device', 'Devices'),
      collection('Topic', 'Topics'),
      collection('Preference', 'Preferences'),
      collection('Receipt', 'Receipts'),
    ],
    writes: ['outbound:fcm', 'outbound:google-oauth', 'outbound:apns', 'outbound:apns-sandbox'],
    subscribers: [
      {
        id: 'PushTopicSender',
        eventTypes: ['message.created', 'mention'],
        bindings: [...readWrite, 'outbound:fcm', 'outbound:google-oauth', 'outbound:apns', 'outbound:apns-sandbox'],
        summary: 'Sends a push notification to the offline members of a room',
      },
    ],
  },
  {
    // The Ai area itself has landed (functions/wiring/ai.ts); this one stands for what AI still grows into.
    id: 'AiAssists',
    summary: 'Moderation assists, prompts and model settings',
    auth: 'userOrService',
    collections: [
      collection('Suggestion', 'Suggestions'),
      collection('Summary', 'Summaries'),
      collection('Prompt', 'Prompts'),
      collection('ModelSetting', 'ModelSettings'),
    ],
    writes: ['outbound:ai'],
    subscribers: [
      {
        id: 'ModerationAssistant',
        eventTypes: ['message.created'],
        bindings: [...readWrite, 'outbound:ai'],
        summary: 'Suggests moderation actions for flagged messages',
      },
    ],
  },
  {
    // The Notifications area itself has landed (functions/wiring/notifications.ts); this one stands for what it still grows into.
    id: 'NotificationChannels',
    summary: 'In-app notifications, their channels and the digests',
    auth: 'userOrService',
    collections: [
      collection('Notification', 'Notifications'),
      collection('Subscription', 'Subscriptions'),
      collection('Channel', 'Channels'),
      collection('DigestSetting', 'DigestSettings'),
    ],
    writes: ['queue:Realtime', 'connections:manage'],
    subscribers: [
      {
        id: 'NotificationFanout',
        eventTypes: ['mention', 'user.event', 'room.member_joined'],
        bindings: [...readWrite, 'queue:Realtime', 'connections:manage'],
        summary: "Notifications reach their users' user channels",
      },
      { id: 'DigestBuilder', eventTypes: ['message.created'], bindings: readWrite, summary: 'Collects unread messages into digests' },
    ],
  },
  {
    // The Privacy area itself has landed (functions/wiring/privacy.ts); this one stands for what it still grows into.
    id: 'PrivacyRecords',
    summary: 'Data exports, erasure requests, consents and retention',
    auth: 'userOrService',
    collections: [
      collection('Export', 'Exports'),
      collection('ErasureRequest', 'ErasureRequests'),
      collection('Consent', 'Consents'),
      collection('RetentionPolicy', 'RetentionPolicies'),
    ],
    writes: ['connections:manage'],
    subscribers: [],
  },
  {
    id: 'Content',
    summary: 'Attachments, emoji, stickers and content reports',
    auth: 'userOrService',
    collections: [
      collection('Attachment', 'Attachments'),
      collection('Emoji', 'Emojis'),
      collection('Sticker', 'Stickers'),
      collection('Report', 'Reports'),
    ],
    writes: ['queue:Realtime'],
    subscribers: [],
  },
  {
    // A made-up area (the real Widget area exists: functions/wiring/widget.ts).
    id: 'Branding',
    summary: 'Branding of the customer-facing pages: sites, themes, launchers and greetings',
    auth: 'userOrService',
    collections: [
      collection('Site', 'Sites'),
      collection('Theme', 'Themes'),
      collection('Launcher', 'Launchers', { auth: 'operator', writes: ['secret:operator-key'] }),
      collection('Greeting', 'Greetings'),
    ],
    writes: ['queue:Realtime', 'connections:manage'],
    subscribers: [],
  },
  {
    // The Bridges area itself has landed (functions/wiring/bridges.ts); this one stands for more networks and their mappings.
    id: 'ChatNetworks',
    summary: 'Links to other chat networks: networks, room mappings, credentials, deliveries',
    auth: 'userOrService',
    collections: [
      collection('Network', 'Networks'),
      collection('RoomMapping', 'RoomMappings'),
      collection('Credential', 'Credentials'),
      collection('Delivery', 'Deliveries'),
    ],
    writes: ['secret:webhook-key'],
    subscribers: [
      {
        id: 'NetworkRelay',
        eventTypes: ['message.created', 'message.updated', 'handoff'],
        bindings: [...readWrite, 'secret:webhook-key'],
        summary: 'Relays messages to the bridged networks',
      },
    ],
  },
  {
    id: 'UsageReports',
    summary: 'Room and user statistics, usage reports',
    auth: 'userOrService',
    collections: [
      collection('RoomStat', 'RoomStats'),
      collection('UserStat', 'UserStats'),
      collection('UsageReport', 'UsageReports'),
      collection('StatsExport', 'StatsExports'),
    ],
    writes: [],
    subscribers: [],
  },
];

/** The five operations on a collection, each served by an existing handler of the same shape. */
const operations: readonly { verb: string; method: HttpMethod; item: boolean; handler: string }[] = [
  { verb: 'List', method: 'GET', item: false, handler: 'http/rooms/list-rooms.ts' },
  { verb: 'Create', method: 'POST', item: false, handler: 'http/rooms/create-room.ts' },
  { verb: 'Get', method: 'GET', item: true, handler: 'http/rooms/get-room.ts' },
  { verb: 'Update', method: 'PATCH', item: true, handler: 'http/rooms/update-room.ts' },
  { verb: 'Delete', method: 'DELETE', item: true, handler: 'http/rooms/remove-member.ts' },
];

/** The `index`-th route of an area: collection after collection, five operations each (a second round gets `/v2/` paths). */
function projectedRoute(area: FutureArea, index: number): HttpRoute {
  const operation = operations[index % operations.length] as (typeof operations)[number];
  const round = Math.floor(index / (operations.length * area.collections.length));
  const target = area.collections[Math.floor(index / operations.length) % area.collections.length] as Collection;
  const suffix = round === 0 ? '' : String(round + 1);
  const base = `/${area.id.toLowerCase()}${round === 0 ? '' : `/v${round + 1}`}/${target.segment}`;
  const writes = operation.method !== 'GET';
  return {
    id: `${operation.verb}${area.id}${operation.item || operation.verb !== 'List' ? target.one : target.many}${suffix}`,
    method: operation.method,
    path: operation.item ? `${base}/{${target.param}}` : base,
    handler: target.auth === 'operator' ? 'http/platform/rotate-project-keys.ts' : operation.handler,
    auth: target.auth ?? area.auth,
    bindings: writes
      ? [...readWrite, ...(target.writes ?? area.writes)]
      : target.auth === 'operator'
        ? ['table:read', 'secret:operator-key']
        : ['table:read'],
    summary: `${operation.verb} ${operation.item ? `one ${target.one}` : target.many} (projected)`,
  };
}

/**
 * `routeCount` HTTP routes dealt over the {@link futureAreas} (about `routeCount / 8` each), each area
 * with its event subscribers. Areas dealt no route are left out.
 */
export function projectedAreas(routeCount: number): Area[] {
  return futureAreas.flatMap((area, areaIndex) => {
    const count = Math.floor(routeCount / futureAreas.length) + (areaIndex < routeCount % futureAreas.length ? 1 : 0);
    if (count === 0) return [];
    const subscribers: EventSubscriber[] = area.subscribers.map((subscriber) => ({
      ...subscriber,
      handler: 'workers/notify-watchers.ts',
      batchSize: 10,
      maxConcurrency: 2,
      timeoutSeconds: 30,
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 5,
    }));
    return [
      {
        id: area.id,
        summary: `${area.summary} (projected)`,
        httpRoutes: Array.from({ length: count }, (_, index) => projectedRoute(area, index)),
        eventSubscribers: subscribers,
      } satisfies Area,
    ];
  });
}

/** What one template of a cloud assembly holds, against {@link stackLimits}. */
export interface StackSize {
  /** The root stack's name (`Chat-dev`) or the area id of a nested stack. */
  readonly name: string;
  /** File name in the cloud assembly. */
  readonly templateFile: string;
  readonly resources: number;
  readonly templateBytes: number;
  readonly parameters: number;
  readonly outputs: number;
}

/** A template as CloudFormation reads it. */
export interface TemplateJson {
  readonly Parameters?: Record<string, unknown>;
  readonly Resources: Record<string, { Type: string; Properties?: Record<string, unknown>; DependsOn?: string | string[] }>;
  readonly Outputs?: Record<string, unknown>;
}

/** The result of {@link synthesizeStacks}. */
export interface SynthesizedStacks {
  /** Every template file of the assembly, root first. */
  readonly stacks: readonly (StackSize & { readonly template: TemplateJson })[];
  readonly synthMs: number;
}

/**
 * Synthesizes the chat app as `cdk synth` would (feature flags from cdk.json, no lookups), without
 * bundling, and measures every template file of the cloud assembly (the root's and each nested
 * stack's), named after its stack. The assembly directory is removed afterwards.
 */
export function synthesizeStacks(options: Pick<ChatAppOptions, 'areas' | 'config' | 'nagChecks'> = {}): SynthesizedStacks {
  const cdkJson = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: object };
  const outdir = mkdtempSync(path.join(tmpdir(), 'chat-stack-sizes-'));
  try {
    const started = performance.now();
    const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
    const { stack } = createChatApp(app, { nagChecks: false, ...options });
    const assembly = app.synth();
    const synthMs = Math.round(performance.now() - started);
    const names = new Map<string, string>([
      [stack.templateFile, stack.stackName],
      ...[...stack.areas].map(([areaId, areaStack]): [string, string] => [areaStack.templateFile, areaId]),
      ...(stack.edge ? [[stack.edge.console.deployment.templateFile, 'ConsoleSite'] as [string, string]] : []),
    ]);
    const files = readdirSync(assembly.directory)
      .filter((file) => file.endsWith('.template.json'))
      .sort((a, b) => Number(b === stack.templateFile) - Number(a === stack.templateFile) || a.localeCompare(b));
    const stacks = files.map((file) => {
      const text = readFileSync(path.join(assembly.directory, file));
      const template = JSON.parse(text.toString('utf8')) as TemplateJson;
      return {
        name: names.get(file) ?? file,
        templateFile: file,
        resources: Object.keys(template.Resources).length,
        templateBytes: text.length,
        parameters: Object.keys(template.Parameters ?? {}).length,
        outputs: Object.keys(template.Outputs ?? {}).length,
        template,
      };
    });
    return { stacks, synthMs };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
