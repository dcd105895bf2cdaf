import { beforeAll, describe, expect, it } from 'vitest';
import { type Area, areas, functionEntries, functionsOf, httpRoutes, ORIGIN_VERIFY_HEADER } from '#wiring';
import { type Binding, outboundHosts, secretDefinitions } from '#wiring/bindings';
import { callsTheModel } from '../../../lib/stacks/area-stack.ts';
import { createChatApp } from '../../../lib/stacks/chat-app.ts';
import { type ChatConfig, resolveChatConfig } from '../../../lib/stacks/chat-config.ts';
import { expectedEnvironment, streamingRoutes } from '../../support/chat-stack/expectations.ts';
import {
  environmentOf,
  functionIdIn,
  isDeployedWith,
  newApp,
  pascalCase,
  resourcesOfType,
  type Synthesized,
  synthesize,
  synthesizedApp,
  templateFiles,
  viewOf,
  viewOfFunction,
} from '../../support/chat-stack/synthesized.ts';

/**
 * The app as a deployment configures it: bindings the synth refuses, and an app synthesized with
 * settings, reservations, provider URLs and secrets in context (its own synth, beside the shared one).
 */

let main: Synthesized;

beforeAll(() => {
  main = synthesizedApp();
}, 120_000);

describe('bindings', () => {
  const probe = (bindings: Binding[]): Area => ({
    id: 'Probe',
    summary: 'One route with the bindings under test',
    httpRoutes: [
      { id: 'Probe', method: 'GET', path: '/probe', handler: 'http/health/get-health.ts', auth: 'none', bindings, summary: 'Probe' },
    ],
  });

  it('fail the synth for a state machine of another area', () => {
    expect(() => createChatApp(newApp(), { nagChecks: false, areas: [probe(['stateMachine:WebhookRetry'])] })).toThrow(
      /Probe area binds state machine WebhookRetry, which is not one of its own/,
    );
  });

  it('fail the synth for a binding functions/wiring/bindings.ts does not know', () => {
    expect(() => createChatApp(newApp(), { nagChecks: false, areas: [probe(['secret:database-password' as Binding])] })).toThrow(
      /Unknown binding secret:database-password/,
    );
    expect(() => createChatApp(newApp(), { nagChecks: false, areas: [probe(['queue:Nowhere'])] })).toThrow(
      /No shared queue with id Nowhere/,
    );
  });
});

describe('configuration', () => {
  /** Functions bound to provider hosts: the real wiring table binds none yet. */
  const providerProbe: Area = {
    id: 'ProviderProbe',
    summary: 'Functions bound to provider hosts',
    httpRoutes: (['fcm', 'apns', 'ai'] as const).map((host) => ({
      id: `Probe${pascalCase(host)}`,
      method: 'POST' as const,
      path: `/probe/${host}`,
      handler: 'http/health/get-health.ts',
      auth: 'none' as const,
      // A model caller holds the provider's key too (`callsTheModel`).
      bindings: host === 'ai' ? (['outbound:ai', 'secret:ai-key'] as const) : [`outbound:${host}` as const],
      summary: `Calls ${host}`,
    })),
  };
  const contextSecrets = {
    operatorKey: 'context-operator-key-4f1b9c2e7a',
    CHAT_OPERATOR_KEY: 'chat-operator-key-8d3e6a0b5c',
    WEBHOOK_SECRET_ENCRYPTION_KEY: 'ab'.repeat(32),
  };
  const overrides = {
    rateLimitMessagesPerMinute: 30,
    logLevel: 'DEBUG',
    streamReservedConcurrency: 25,
    aiReservedConcurrency: 10,
    providerUrls: { [outboundHosts.fcm.setting]: 'http://127.0.0.1:4010' },
  } satisfies Partial<ChatConfig>;
  const configured = resolveChatConfig(overrides);
  const entries = [...areas, providerProbe].flatMap(functionsOf).filter((entry) => isDeployedWith(entry, overrides.providerUrls));
  let synth: Synthesized;

  beforeAll(() => {
    synth = synthesize({ nagChecks: false, config: overrides, areas: [...areas, providerProbe] });
  }, 120_000);

  it('passes the settings, and provider URLs to the functions bound to their host only, to every function of every area', () => {
    const functions = resourcesOfType('AWS::Lambda::Function', synth);

    // Log subscribers are the root's (docs/architecture.md), every other function its area's.
    const inRoot = entries.filter((entry) => entry.kind === 'logSubscriber');
    expect(functions).toHaveLength(entries.length - inRoot.length);
    for (const entry of entries) {
      const view = viewOfFunction(entry, synth);
      expect(environmentOf(view, functionIdIn(view, entry.id)), entry.id).toEqual(expectedEnvironment(entry, configured));
    }
    // The configured host, the real host by default, and nothing for a provider without one.
    const probe = viewOf('ProviderProbe', synth);
    expect(environmentOf(probe, functionIdIn(probe, 'ProbeFcm')).FCM_BASE_URL).toBe('http://127.0.0.1:4010');
    expect(environmentOf(probe, functionIdIn(probe, 'ProbeApns')).APNS_BASE_URL).toBe('https://api.push.apple.com');
    expect(Object.keys(environmentOf(probe, functionIdIn(probe, 'ProbeAi')))).not.toContain('AI_BASE_URL');
    const bound = functions.filter(({ resource }) => 'FCM_BASE_URL' in resource.Properties.Environment.Variables);
    expect(bound.map(({ view, id }) => view.names.get(id)).sort()).toEqual(
      [
        'ProbeFcm function',
        ...functionEntries.filter((entry) => entry.bindings.includes('outbound:fcm')).map((entry) => `${entry.id} function`),
      ].sort(),
    );
  });

  it('reserves streamReservedConcurrency executions for each streaming route, aiReservedConcurrency for each AI route, no other', () => {
    const reserved = resourcesOfType('AWS::Lambda::Function', synth)
      .filter(({ resource }) => resource.Properties.ReservedConcurrentExecutions !== undefined)
      .map(({ view, id, resource }) => `${view.names.get(id)}: ${resource.Properties.ReservedConcurrentExecutions}`);
    const aiRoutes = httpRoutes.filter((route) => callsTheModel(route) && route.transport !== 'functionUrl');

    expect(aiRoutes.map((route) => route.id).sort()).toEqual(['InvokeAgent', 'StartRoomHandoff', 'SuggestReplies', 'SummarizeThread']);
    expect(reserved.sort()).toEqual(
      [
        ...streamingRoutes.map((route) => `${route.id} function: 25`),
        ...aiRoutes.map((route) => `${route.id} function: 10`),
        // The probe areas' AI-bound route is an HTTP route too.
        'ProbeAi function: 10',
      ].sort(),
    );
  });

  it('puts no secret value in any template: a secret given in context fails the synth, naming the key', () => {
    expect(() => synthesize({ nagChecks: false }, contextSecrets)).toThrow(
      /Context key CHAT_OPERATOR_KEY is a secret[^\n]*operator-key[\s\S]*Context key WEBHOOK_SECRET_ENCRYPTION_KEY is a secret[^\n]*webhook-key[\s\S]*Context key operatorKey is gone/,
    );
    const files = templateFiles(synth.outdir);

    // The areas, the probe area and the edge's ConsoleSite.
    expect([...files.keys()].filter((file) => file.endsWith('.nested.template.json'))).toHaveLength(areas.length + 2);
    // One deliberate reference, not a value: CloudFront resolves the origin-verify secret into the
    // header it sends the APIs when the distribution deploys (test/infra/chat-stack/edge.test.ts).
    const withoutOriginHeaders = (text: string) => {
      const template = JSON.parse(text) as { Resources: Record<string, { Type: string; Properties: any }> };
      for (const resource of Object.values(template.Resources)) {
        if (resource.Type !== 'AWS::CloudFront::Distribution') continue;
        for (const origin of resource.Properties.DistributionConfig.Origins) {
          expect(origin.OriginCustomHeaders ?? [], 'the only custom origin header').toEqual(
            (origin.OriginCustomHeaders ?? []).filter((header: { HeaderName: string }) => header.HeaderName === ORIGIN_VERIFY_HEADER),
          );
          delete origin.OriginCustomHeaders;
        }
      }
      return JSON.stringify(template);
    };
    for (const [file, text] of [...files, ...templateFiles(main.outdir)].map(
      ([file, text]) => [file, withoutOriginHeaders(text)] as const,
    )) {
      for (const forbidden of [
        ...Object.values(contextSecrets),
        '{{resolve:secretsmanager',
        ...Object.values(secretDefinitions).map((definition) => definition.setting),
      ]) {
        expect(text.includes(forbidden), `${file} contains ${forbidden}`).toBe(false);
      }
    }
  });

  it('rejects a reservation or provider URL the functions could not use', () => {
    expect(() => resolveChatConfig({ streamReservedConcurrency: 0 })).toThrow(/streamReservedConcurrency must be an integer of at least 5/);
    expect(() => resolveChatConfig({ vapidSubject: 'push@example.com' })).toThrow(/vapidSubject must begin with mailto: or https:\/\//);
    expect(() => resolveChatConfig({ pushEnvironment: 'prod env' })).toThrow(/pushEnvironment must be/);
    expect(() => resolveChatConfig({ providerUrls: { FCM_BASE_URL: 'fcm.googleapis.com' } })).toThrow(
      /FCM_BASE_URL must be an http\(s\) URL/,
    );
  });
});
