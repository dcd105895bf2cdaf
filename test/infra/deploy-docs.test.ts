import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { functionEntries } from '#wiring';
import { repoRoot } from '../../lib/constructs/chat-function.ts';
import { idleCost } from '../../lib/constructs/idle-cost.ts';
import { CHAT_CONTEXT_KEYS } from '../../lib/stacks/chat-config.ts';
import { environmentOf, functionIdIn, type Synthesized, synthesize, viewOfFunction } from '../support/chat-stack/synthesized.ts';
import { deployChecklist, markdownSection, readmeDeployCommands } from '../support/deploy-checklist.ts';
import { readDoc } from '../support/docs.ts';

/**
 * The first-deploy checklist of docs/operations.md and the README, up to the deploy: one deploy
 * command in both, whose context keys the app reads and which take effect in the templates; the
 * outputs the steps after it read exist. test/infra/cdk-synth-cli.test.ts runs the checklist's
 * offline check through the CLI; test/e2e/deploy-checklist.test.ts the steps after the deploy.
 */

const checklist = deployChecklist();
let synth: Synthesized;

beforeAll(() => {
  synth = synthesize({ nagChecks: false }, checklist.context);
}, 120_000);

describe('first-deploy checklist', () => {
  it('has one deploy command, the same in the README', () => {
    expect(readmeDeployCommands()).toEqual([checklist.deployCommand]);
  });

  it('sets the context keys it says matter, each one a key the app reads', () => {
    const mattering = [...checklist.text.matchAll(/^ {3}\| (`[^|]+) \|/gm)].flatMap(([, keys = '']) =>
      [...keys.matchAll(/`(\w+)`/g)].map(([, key]) => key as string),
    );

    expect(mattering).toEqual(expect.arrayContaining(['alarmEmail', 'vapidSubject', 'corsAllowOrigins', 'AI_BASE_URL', 'AI_MODEL']));
    expect(mattering.filter((key) => !(CHAT_CONTEXT_KEYS as readonly string[]).includes(key))).toEqual([]);
    expect(Object.keys(checklist.context)).toEqual(
      expect.arrayContaining(['stage', 'alarmEmail', 'vapidSubject', 'corsAllowOrigins', 'AI_BASE_URL']),
    );
  });

  it('synthesizes with the deploy command’s context, and every key of it takes effect', () => {
    const { stage, alarmEmail, vapidSubject, corsAllowOrigins, AI_BASE_URL: aiBaseUrl, AI_MODEL: aiModel } = checklist.context;

    expect(synth.stack.stackName).toBe(`Chat-${stage}`);
    expect(Object.values(synth.rootResources).filter((resource) => resource.Type === 'AWS::SNS::Subscription')).toEqual([
      expect.objectContaining({ Properties: expect.objectContaining({ Protocol: 'email', Endpoint: alarmEmail }) }),
    ]);
    const httpApi = Object.values(synth.rootResources).find(
      (resource) => resource.Type === 'AWS::ApiGatewayV2::Api' && resource.Properties.ProtocolType === 'HTTP',
    );
    expect(httpApi?.Properties.CorsConfiguration.AllowOrigins).toEqual(corsAllowOrigins?.split(','));
    for (const entry of functionEntries) {
      const view = viewOfFunction(entry, synth);
      const environment = environmentOf(view, functionIdIn(view, entry.id));
      expect(environment.VAPID_SUBJECT, entry.id).toBe(vapidSubject);
      expect(environment.AI_MODEL, entry.id).toBe(aiModel);
      expect(environment.AI_BASE_URL, entry.id).toBe(entry.bindings.includes('outbound:ai') ? aiBaseUrl : undefined);
    }
    expect(functionEntries.filter((entry) => entry.bindings.includes('outbound:ai')).length).toBeGreaterThan(0);
  });

  it('reads only outputs the stack has, from the stack the deploy command makes', () => {
    const stackNames = [...checklist.afterBlocks.join('\n').matchAll(/--stack-name (\S+)/g)].map(([, name]) => name);

    expect(checklist.outputsRead).toEqual(
      // One address for clients, behind the edge distribution: the raw API URLs are for edge=false.
      expect.arrayContaining(['BaseUrl', 'OperatorKeySecretArn', 'AiKeySecretArn']),
    );
    expect(checklist.outputsRead.filter((name) => !(name in synth.outputs))).toEqual([]);
    expect(new Set(stackNames)).toEqual(new Set([synth.stack.stackName]));
  });

  it('quotes what the deployment costs idle, as its templates add up (lib/constructs/idle-cost.ts)', () => {
    const templates = [synth.root.toJSON(), ...[...synth.views.values()].map((view) => view.template.toJSON())] as unknown as Parameters<
      typeof idleCost
    >[0];
    const cost = idleCost(templates);
    const dollars = (amount: number) => `$${amount.toFixed(2)}`;

    expect(cost.secrets).toBe(8);
    expect(checklist.text).toContain(`**about ${dollars(cost.monthlyDollars)} a month**`);
    expect(checklist.text).toContain(
      `${cost.alarms.alarms} alarms reading ${cost.alarms.alarmMetrics} metrics and ${cost.alarms.compositeAlarms} composite alarms, ${dollars(cost.alarms.monthlyDollars)}`,
    );
    expect(checklist.text).toContain(`${cost.polledQueues} queues`);
    expect(checklist.text).toContain(`${cost.kmsKeys} KMS keys`);
    expect(readDoc('README.md')).toContain(`about ${dollars(cost.monthlyDollars)} a month`);
  });
});

describe('cdk.json', () => {
  it('sets every feature flag the installed aws-cdk-lib recommends, to the recommended value or one docs/operations.md explains', () => {
    const recommended = JSON.parse(
      readFileSync(path.join(repoRoot, 'node_modules/aws-cdk-lib/recommended-feature-flags.json'), 'utf8'),
    ) as Record<string, unknown>;
    const { context } = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: Record<string, unknown> };
    const flagsSection = markdownSection(readDoc('docs/operations.md'), '### CDK feature flags');

    expect(Object.keys(recommended).filter((flag) => !(flag in context))).toEqual([]);
    const different = Object.keys(recommended).filter((flag) => JSON.stringify(context[flag]) !== JSON.stringify(recommended[flag]));
    expect(different.filter((flag) => !flagsSection.includes(`\`${flag}\``))).toEqual([]);
  });
});
