import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { outboundHosts, secretDefinitions } from '#wiring/bindings';
import {
  AI_MODEL_SETTINGS,
  CHAT_CONTEXT_KEYS,
  chatContextOverrides,
  resolveChatConfig,
  sharedEnvironment,
} from '../../lib/stacks/chat-config.ts';
import { runCdkCli } from '../support/cdk-cli.ts';
import { markedTableRows, readDoc } from '../support/docs.ts';

/**
 * The context keys a deployment is configured with: a key the app does not read fails the synth
 * naming it, the CDK's own keys pass, and the two documents that list settings agree with the code
 * (docs/operations.md's context keys, the README's "On AWS" column).
 */

const codeSpans = (cell: string) => [...cell.matchAll(/`([^`]+)`/g)].map(([, text]) => text as string);

describe('context keys', () => {
  it('an unknown, obsolete or secret key fails `cdk synth`, named with what to do, before anything is bundled', () => {
    // Act
    const result = runCdkCli([
      'synth',
      '--quiet',
      '-c',
      'alarmEmial=ops@example.com',
      '-c',
      'operatorKey=context-operator-key-4f1b9c2e7a',
      '-c',
      'AI_API_KEY=sk-context-secret-8d3e6a0b5c',
    ]);

    // Assess
    expect(result.status, result.output).not.toBe(0);
    expect(result.output).toContain('Unknown context key alarmEmial.');
    expect(result.output).toContain('Context key operatorKey is gone: nothing secret is configuration.');
    expect(result.output).toContain(
      'Context key AI_API_KEY is a secret, never configuration: on AWS it is the Secrets Manager secret ai-key',
    );
    expect(result.output).toContain('alarmEmail');
    expect(result.output).not.toContain('Bundling asset');
    // A secret given by mistake is not echoed back.
    expect(result.output).not.toContain('sk-context-secret-8d3e6a0b5c');
  });

  it('every key the app reads passes, and so do the keys of the CDK (feature flags, the CLI’s, cached lookups)', () => {
    // Prepare: each key of the app with a value resolveChatConfig takes, and keys the CDK itself sets
    const values: Record<string, string> = {
      stage: 'prod',
      vapidSubject: 'mailto:ops@example.com',
      pushEnvironment: 'production',
      logLevel: 'DEBUG',
      corsAllowOrigins: 'https://app.example.com',
      webSocketAccessLogs: 'false',
      tableDeletionProtection: 'false',
      alarmEmail: 'ops@example.com',
      account: '123456789012',
      region: 'eu-west-1',
      streamReservedConcurrency: 'off',
      digestEmailFrom: 'digest@example.com',
      digestEmailIdentity: 'example.com',
      callsServerUrl: 'wss://calls.example.com',
      aiReservedConcurrency: 'off',
      edge: 'true',
      domainName: 'chat.example.com',
      certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789',
      hostedZoneId: 'Z0123456789ABCDEFGHIJ',
      waf: 'false',
      webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/chat-edge/0a1b2c3d-4e5f-6789-abcd-ef0123456789',
      wafRateLimit: '300',
      ...Object.fromEntries(AI_MODEL_SETTINGS.map((setting) => [setting, 'gpt-4o-mini'])),
      ...Object.fromEntries(Object.values(outboundHosts).map((host) => [host.setting, 'https://provider.example'])),
    };
    const context = {
      ...Object.fromEntries(CHAT_CONTEXT_KEYS.map((key) => [key, values[key] ?? '7'])),
      '@aws-cdk/aws-lambda:recognizeLayerVersion': true,
      '@aws-cdk-containers/ecs-service-extensions:enableDefaultLogDriver': true,
      'aws:cdk:enable-path-metadata': true,
      'availability-zones:account=123456789012:region=eu-west-1': ['eu-west-1a', 'eu-west-1b'],
      'acknowledged-issue-numbers': [32775],
    };

    // Act
    const config = resolveChatConfig(chatContextOverrides(new App({ context }).node));

    // Assess
    expect(config).toMatchObject({ stage: 'prod', alarmEmail: 'ops@example.com', corsAllowOrigins: ['https://app.example.com'] });
  });

  it('are the keys docs/operations.md lists under "Configuration", no more, no fewer', () => {
    const documented = markedTableRows(readDoc('docs/operations.md'), 'context-keys').flatMap(([keys = '']) => codeSpans(keys));

    expect(documented.sort()).toEqual([...CHAT_CONTEXT_KEYS].sort());
  });

  it('set the variables the README marks "context" in its "On AWS" column; secrets and local-only settings are no context key', () => {
    // Prepare: the variables a deployment sets from context, by the key that sets them
    const variablesFromContext = new Set([
      ...Object.keys(sharedEnvironment(resolveChatConfig())),
      ...AI_MODEL_SETTINGS,
      ...Object.values(outboundHosts).map((host) => host.setting),
      // Set on the functions that use them: the digest schedule's switch, the digest worker's sender (its `email:digest` binding).
      'DAILY_DIGEST_ENABLED',
      'DIGEST_EMAIL_FROM',
      // Set on every function when given, like the shared settings; unset by default (stub call tokens).
      'CALLS_SERVER_URL',
      'CALLS_API_KEY',
    ]);
    const secretOf = new Map(Object.entries(secretDefinitions).map(([secretId, definition]) => [definition.setting as string, secretId]));
    const rows = markedTableRows(readDoc('README.md'), 'configuration');

    // Act
    const wrong = rows.flatMap(([variables = '', , , onAws = '']) => {
      const names = codeSpans(variables);
      const keys = codeSpans(onAws);
      const problem = onAws.startsWith('context ')
        ? keys.length !== names.length ||
          keys.some((key) => !(CHAT_CONTEXT_KEYS as readonly string[]).includes(key)) ||
          names.some((name) => !variablesFromContext.has(name))
        : onAws.startsWith('secret ')
          ? names.length !== 1 || secretOf.get(names[0] as string) !== keys[0]
          : onAws !== 'local only' || names.some((name) => variablesFromContext.has(name) || secretOf.has(name));
      return problem ? [`${variables}: ${onAws}`] : [];
    });

    // Assess
    expect(rows.length).toBeGreaterThan(40);
    expect(wrong).toEqual([]);
    const marked = rows.filter(([, , , onAws = '']) => onAws.startsWith('context ')).flatMap(([variables = '']) => codeSpans(variables));
    expect(marked.sort()).toEqual([...variablesFromContext].sort());
    expect(rows.filter(([, , , onAws = '']) => onAws.startsWith('secret ')).length).toBe(Object.keys(secretDefinitions).length);
  });
});
