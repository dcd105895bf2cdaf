import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { Annotations, Match, Template } from 'aws-cdk-lib/assertions';
import { describe, expect, it } from 'vitest';
import { type Area, areas, eventSubscribers, httpRoutes, queueConsumers } from '#wiring';
import { repoRoot } from '../../lib/constructs/chat-function.ts';
import { AI_CONSUMER_MAX_CONCURRENCY, callsTheModel, ROUTE_CREATION_CHAINS } from '../../lib/stacks/area-stack.ts';
import { createChatApp } from '../../lib/stacks/chat-app.ts';
import {
  type ChatConfig,
  LAMBDA_UNRESERVED_MINIMUM,
  MINIMUM_RESERVED_CONCURRENCY,
  resolveChatConfig,
} from '../../lib/stacks/chat-config.ts';
import { projectedAreas, type SynthesizedStacks, synthesizeStacks, type TemplateJson } from '../support/area-projection.ts';
import { SHARED_SYNTH_CONTEXT } from '../support/chat-stack/synthesized.ts';

/**
 * What makes a deploy fail or leave things behind, read from the synthesized templates (bundling
 * skipped): reserved concurrency a new account cannot give, resources retained by a rolled-back
 * first deploy, route changes that race on one API, names that collide across regions.
 */

type Resource = TemplateJson['Resources'][string] & {
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string | string[];
};

function newApp(context: Record<string, unknown> = {}): App {
  const cdkJson = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: object };
  return new App({
    outdir: mkdtempSync(path.join(tmpdir(), 'chat-deploy-')),
    context: { ...cdkJson.context, ...context, 'aws:cdk:bundling-stacks': [] },
  });
}

const synthesized = (config: Partial<ChatConfig> = {}, built: readonly Area[] = areas) => synthesizeStacks({ areas: built, config });
const resourcesOf = ({ stacks }: SynthesizedStacks) =>
  stacks.flatMap((stack) =>
    Object.entries(stack.template.Resources).map(([id, resource]) => ({ stack: stack.name, id, resource: resource as Resource })),
  );
const reservations = (synth: SynthesizedStacks) =>
  resourcesOf(synth)
    .filter(({ resource }) => resource.Type === 'AWS::Lambda::Function' && resource.Properties?.ReservedConcurrentExecutions !== undefined)
    .map(({ resource }) => resource.Properties?.ReservedConcurrentExecutions as number);
const aiRoutes = httpRoutes.filter((route) => route.transport !== 'functionUrl' && callsTheModel(route));

const main = synthesized();

describe('a new account (a concurrency quota of 10 to 50)', () => {
  it('can deploy the defaults: no function reserves concurrency, so the account needs no more than Lambda keeps unreserved', () => {
    expect(reservations(main)).toEqual([]);
    // What the account's quota must be: Lambda's unreserved minimum plus every reservation.
    expect(LAMBDA_UNRESERVED_MINIMUM + reservations(main).reduce((sum, reserved) => sum + reserved, 0)).toBe(100);
  });

  it('reserves only what is configured, and says what quota that needs', () => {
    const synth = synthesized({ streamReservedConcurrency: 20, aiReservedConcurrency: 10 });
    const reserved = reservations(synth);

    expect(reserved.sort((a, b) => a - b)).toEqual([...aiRoutes.map(() => 10), 20]);
    expect(LAMBDA_UNRESERVED_MINIMUM + reserved.reduce((sum, value) => sum + value, 0)).toBe(100 + 20 + 10 * aiRoutes.length);
  });

  it.each([
    [{ streamReservedConcurrency: 'off' }, undefined],
    [{ streamReservedConcurrency: '12' }, 12],
    [{}, undefined],
  ])('reads context %o as a reservation of %s', (context, expected) => {
    const { config } = createChatApp(newApp(context), { nagChecks: false });
    expect(config.streamReservedConcurrency).toBe(expected);
  });

  it.each([
    [{ streamReservedConcurrency: '3' }, /streamReservedConcurrency must be an integer of at least 5, or unset \(no reservation\), got 3/],
    [{ aiReservedConcurrency: '0' }, /aiReservedConcurrency must be an integer of at least 5/],
    [{ streamReservedConcurrency: '7.5' }, /streamReservedConcurrency must be an integer/],
    [{ streamReservedConcurrency: 'lots' }, /Context streamReservedConcurrency must be a number, got "lots"/],
    [{ streamConcurrency: '100' }, /streamConcurrency was renamed streamReservedConcurrency/],
    [{ aiThrottleRateLimit: '0' }, /aiThrottleRateLimit must be a positive integer/],
  ])('fails the synth with a clear message for context %o', (context, message) => {
    expect(() => createChatApp(newApp(context), { nagChecks: false })).toThrow(message);
  });

  it(`documents the minimum reservation (${MINIMUM_RESERVED_CONCURRENCY}) and the unreserved ${LAMBDA_UNRESERVED_MINIMUM} in docs/operations.md`, () => {
    const operations = readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8');
    expect(operations).toContain('`streamReservedConcurrency`');
    expect(operations).toContain('`aiReservedConcurrency`');
    expect(operations).toMatch(new RegExp(`at least ${MINIMUM_RESERVED_CONCURRENCY}\\b`));
    expect(operations).toMatch(new RegExp(`${LAMBDA_UNRESERVED_MINIMUM} plus every reservation`));
  });
});

describe('AI functions', () => {
  const root = () => main.stacks[0]?.template as TemplateJson;

  it('are the HTTP routes bound to outbound:ai, each throttled on the HTTP stage below the stage default', () => {
    const stage = Object.values(root().Resources).find(
      (resource) => resource.Type === 'AWS::ApiGatewayV2::Stage' && resource.Properties?.StageName === '$default',
    );

    expect(aiRoutes.map((route) => route.id).sort()).toEqual(['InvokeAgent', 'StartRoomHandoff', 'SuggestReplies', 'SummarizeThread']);
    expect(stage?.Properties?.RouteSettings).toEqual(
      Object.fromEntries(aiRoutes.map((route) => [`${route.method} ${route.path}`, { ThrottlingRateLimit: 2, ThrottlingBurstLimit: 5 }])),
    );
    expect(stage?.Properties?.DefaultRouteSettings).toEqual({ ThrottlingRateLimit: 500, ThrottlingBurstLimit: 1000 });
  });

  it('take their throttle from aiThrottleRateLimit and aiThrottleBurstLimit', () => {
    const synth = synthesized({ aiThrottleRateLimit: 7, aiThrottleBurstLimit: 11 });
    const stage = Template.fromJSON(synth.stacks[0]?.template as unknown as Record<string, unknown>);
    stage.hasResourceProperties('AWS::ApiGatewayV2::Stage', {
      StageName: '$default',
      RouteSettings: Match.objectLike({ 'POST /messages/suggest-replies': { ThrottlingRateLimit: 7, ThrottlingBurstLimit: 11 } }),
    });
  });

  it(`that consume queues run at most ${AI_CONSUMER_MAX_CONCURRENCY} batches at once (their event source's maximum concurrency)`, () => {
    const consumers = [...queueConsumers, ...eventSubscribers].filter((consumer) => consumer.bindings.includes('outbound:ai'));
    // With AI settings: without them the AI subscribers are not deployed at all.
    const withAi = synthesized({ providerUrls: { ...SHARED_SYNTH_CONTEXT } });
    const mappings = resourcesOf(withAi).filter(({ resource }) => resource.Type === 'AWS::Lambda::EventSourceMapping');

    expect(consumers.map((consumer) => consumer.id).sort()).toEqual([
      'AgentMentions',
      'DigestWorker',
      'RoomSummarizer',
      'RoomSummaryScheduler',
      'VoiceTranscriber',
    ]);
    for (const consumer of consumers) {
      const mapping = mappings.find(({ resource }) => JSON.stringify(resource.Properties?.FunctionName).includes(consumer.id));
      expect(mapping?.resource.Properties?.ScalingConfig, consumer.id).toEqual({ MaximumConcurrency: consumer.maxConcurrency });
      expect(consumer.maxConcurrency, consumer.id).toBeLessThanOrEqual(AI_CONSUMER_MAX_CONCURRENCY);
    }
  });

  it('fail the synth for an AI consumer allowed more batches at once', () => {
    const greedy: Area = {
      id: 'Greedy',
      summary: 'An AI consumer without a bound',
      eventSubscribers: [
        {
          id: 'GreedySummarizer',
          eventTypes: ['message.created'],
          handler: 'workers/summarize-room.ts',
          batchSize: 1,
          maxConcurrency: AI_CONSUMER_MAX_CONCURRENCY + 1,
          timeoutSeconds: 30,
          visibilityTimeoutSeconds: 180,
          maxReceiveCount: 3,
          bindings: ['table:read', 'outbound:ai', 'secret:ai-key'],
          summary: 'Summarizes',
        },
      ],
    };
    expect(() => createChatApp(newApp(), { nagChecks: false, areas: [greedy] })).toThrow(
      /GreedySummarizer calls the AI model with maxConcurrency 6; AI consumers run at most 5 batches at once/,
    );
  });
});

describe('a rolled-back first deploy', () => {
  const retained = (synth: SynthesizedStacks) =>
    resourcesOf(synth)
      .filter(({ resource }) => resource.DeletionPolicy !== undefined && resource.DeletionPolicy !== 'Delete')
      .map(({ stack, id, resource }) => ({
        stack,
        id,
        type: resource.Type,
        policy: resource.DeletionPolicy,
        replace: resource.UpdateReplacePolicy,
      }));

  it.each(['dev', 'prod'])('leaves nothing behind (stage %s): every retained resource is RetainExceptOnCreate, never Retain', (stage) => {
    const synth = stage === 'dev' ? main : synthesized({ stage });
    const kept = retained(synth);

    expect(kept.length).toBeGreaterThan(0);
    expect(kept.filter((resource) => resource.policy !== 'RetainExceptOnCreate')).toEqual([]);
    expect(kept.filter((resource) => resource.replace !== 'Retain')).toEqual([]);
  });

  it('dev keeps the table, the attachments bucket and the webhook key; prod keeps log groups, keys and secrets as well', () => {
    const typesOf = (synth: SynthesizedStacks) => new Set(retained(synth).map((resource) => resource.type));

    expect(typesOf(main)).toEqual(new Set(['AWS::DynamoDB::GlobalTable', 'AWS::S3::Bucket', 'AWS::SecretsManager::Secret']));
    expect(typesOf(synthesized({ stage: 'prod' }))).toEqual(
      new Set(['AWS::DynamoDB::GlobalTable', 'AWS::S3::Bucket', 'AWS::SecretsManager::Secret', 'AWS::Logs::LogGroup', 'AWS::KMS::Key']),
    );
  });

  it('can delete the table it created unless deletion protection is on (prod, or tableDeletionProtection=true)', () => {
    const protection = (synth: SynthesizedStacks) =>
      resourcesOf(synth)
        .filter(({ resource }) => resource.Type === 'AWS::DynamoDB::GlobalTable')
        .map(
          ({ resource }) =>
            (resource.Properties?.Replicas as Array<{ DeletionProtectionEnabled?: boolean }>)?.[0]?.DeletionProtectionEnabled,
        );

    expect(protection(main)).toEqual([false]);
    expect(protection(synthesized({ stage: 'prod' }))).toEqual([true]);
    expect(createChatApp(newApp({ tableDeletionProtection: 'true' }), { nagChecks: false }).config.tableDeletionProtection).toBe(true);
  });

  it('refuses a plain RETAIN removal policy', async () => {
    const { RemovalPolicy } = await import('aws-cdk-lib');
    expect(() => resolveChatConfig({ removalPolicy: RemovalPolicy.RETAIN })).toThrow(/use RETAIN_ON_UPDATE_OR_DELETE/);
  });
});

/**
 * The order CloudFormation creates a template's resources in: a resource starts once everything it
 * depends on (DependsOn, Ref, Fn::GetAtt) exists. Returns each resource's wave (1 = first).
 */
function creationWaves(template: TemplateJson): Map<string, number> {
  const resources = template.Resources as Record<string, Resource>;
  const references = (value: unknown): string[] => {
    if (Array.isArray(value)) return value.flatMap(references);
    if (value && typeof value === 'object') {
      const record = value as Record<string, unknown>;
      if (typeof record.Ref === 'string') return [record.Ref];
      const getAtt = record['Fn::GetAtt'];
      if (Array.isArray(getAtt)) return [String(getAtt[0])];
      return Object.values(record).flatMap(references);
    }
    return [];
  };
  const waves = new Map<string, number>();
  const waveOf = (id: string): number => {
    const known = waves.get(id);
    if (known !== undefined) return known;
    const resource = resources[id] as Resource;
    const dependencies = [...[resource.DependsOn ?? []].flat(), ...references(resource.Properties)].filter(
      (dependency) => dependency in resources,
    );
    const wave = 1 + Math.max(0, ...dependencies.map(waveOf));
    waves.set(id, wave);
    return wave;
  };
  for (const id of Object.keys(resources)) waveOf(id);
  return waves;
}

/** The most API routes any one wave of a template creates at once. */
function routesAtOnce(template: TemplateJson): number {
  const waves = creationWaves(template);
  const perWave = new Map<number, number>();
  for (const [id, resource] of Object.entries(template.Resources)) {
    if (resource.Type !== 'AWS::ApiGatewayV2::Route') continue;
    const wave = waves.get(id) as number;
    perWave.set(wave, (perWave.get(wave) ?? 0) + 1);
  }
  return Math.max(0, ...perWave.values());
}

describe('route creation', () => {
  const projected = synthesized({}, [...areas, ...projectedAreas(150)]);

  it.each([
    ['today', main],
    ['+150 routes', projected],
  ] as const)(`creates at most ${ROUTE_CREATION_CHAINS} routes of an area at once (%s)`, (_label, synth) => {
    const areaStacks = synth.stacks.slice(1);
    const routeCounts = areaStacks.map(
      (stack) => Object.values(stack.template.Resources).filter((r) => r.Type === 'AWS::ApiGatewayV2::Route').length,
    );

    expect(Math.max(...routeCounts)).toBeGreaterThan(ROUTE_CREATION_CHAINS);
    for (const stack of areaStacks) {
      expect(routesAtOnce(stack.template), stack.name).toBeLessThanOrEqual(ROUTE_CREATION_CHAINS);
    }
  });
});

describe('names', () => {
  it('give the dashboard (an account-global name) the region, so a stage deploys in two regions', () => {
    const root = main.stacks[0]?.template as TemplateJson;
    const dashboard = Object.values(root.Resources).find((resource) => resource.Type === 'AWS::CloudWatch::Dashboard');

    expect(dashboard?.Properties?.DashboardName).toEqual({ 'Fn::Join': ['', ['chat-dev-', { Ref: 'AWS::Region' }]] });
  });
});

describe('moving a route to another area', () => {
  // The projection of a move: the first route of Rooms moves to Messages.
  const moved = areas.find((area) => area.id === 'Rooms')?.httpRoutes?.[0];
  if (!moved) throw new Error('Rooms has no HTTP route');
  const routeKey = `${moved.method} ${moved.path}`;
  const withRoute = (area: Area, add: boolean): Area => {
    const others = (area.httpRoutes ?? []).filter((route) => route.id !== moved.id);
    return { ...area, httpRoutes: add ? [...others, moved] : others };
  };
  const movedAreas = areas.map((area) =>
    area.id === 'Rooms' ? withRoute(area, false) : area.id === 'Messages' ? withRoute(area, true) : area,
  );
  const removedAreas = areas.map((area) => (area.id === 'Rooms' ? withRoute(area, false) : area));
  const keysIn = (synth: SynthesizedStacks) =>
    synth.stacks.flatMap((stack) =>
      Object.entries(stack.template.Resources)
        .filter(([, resource]) => resource.Type === 'AWS::ApiGatewayV2::Route' && resource.Properties?.RouteKey === routeKey)
        .map(([id]) => `${stack.name}/${id}`),
    );

  it('in one deploy creates the route key in the new area while the old area still holds it: two nested stacks, one key', () => {
    const before = keysIn(main);
    const after = keysIn(synthesized({}, movedAreas));

    expect(before).toHaveLength(1);
    expect(before[0]?.startsWith(`Rooms/${moved.id}Route`)).toBe(true);
    expect(after).toHaveLength(1);
    expect(after[0]?.startsWith('Messages/')).toBe(true);
    // Same logical id, other stack: CloudFormation creates it in Messages and deletes it from Rooms,
    // in parallel, and API Gateway refuses the create while the key exists ("Route with key already exists").
    expect(after[0]?.split('/')[1]).toBe(before[0]?.split('/')[1]);
  });

  it('in two deploys passes through a template without the key, so neither deploy creates it while it exists', () => {
    expect(keysIn(synthesized({}, removedAreas))).toEqual([]);
    expect(keysIn(synthesized({}, movedAreas))).toHaveLength(1);
  });

  it('is written up in docs/operations.md', () => {
    const operations = readFileSync(path.join(repoRoot, 'docs/operations.md'), 'utf8');
    expect(operations).toContain('### Moving or renaming a route');
  });
});

describe('the alarm e-mail', () => {
  it('is missing: the synth warns that nobody is told', () => {
    const app = newApp();
    const { stack } = createChatApp(app, { nagChecks: false });
    Annotations.fromStack(stack).hasWarning('*', Match.stringLikeRegexp('No alarmEmail: every alarm notifies the topic "chat-dev alarms"'));
  });

  it('is set: no warning, and the topic has its subscription', () => {
    const app = newApp({ alarmEmail: 'ops@example.com' });
    const { stack } = createChatApp(app, { nagChecks: false });
    expect(Annotations.fromStack(stack).findWarning('*', Match.anyValue())).toEqual([]);
    Template.fromStack(stack).hasResourceProperties('AWS::SNS::Subscription', { Protocol: 'email', Endpoint: 'ops@example.com' });
  });
});
