import { beforeAll, describe, expect, it } from 'vitest';
import { type FunctionEntry, functionEntries, httpRoutes, logSubscribers, stateMachines, streamConsumers } from '#wiring';
import { type Binding, bindingVariable, secretDefinitions } from '#wiring/bindings';
import { callbackUrl, connectionsArn, streamReadActions } from '../../support/chat-stack/expectations.ts';
import {
  entryOf,
  environmentOf,
  functionOf,
  functionsAllowedTo,
  grantsOf,
  grantsOfRole,
  referencedIds,
  resourcesOfType,
  type Synthesized,
  secretIds,
  synthesizedApp,
  viewOf,
  viewOfFunction,
} from '../../support/chat-stack/synthesized.ts';

/**
 * Least privilege across every stack of the synthesized app: who may scan or read the stream,
 * publish, read each secret, post to connections or start the retry state machine, and which grants
 * may name `*`. Each function's own grants are checked against its bindings in its area's file.
 */

let main: Synthesized;

beforeAll(() => {
  main = synthesizedApp();
}, 120_000);

describe('least privilege', () => {
  const has = (binding: Binding) => (entry: FunctionEntry) => entry.bindings.includes(binding);
  const idsOf = (entries: readonly FunctionEntry[]) => entries.map((entry) => entry.id).sort();

  it('lets no function scan the table, and only the stream consumers read its stream', () => {
    expect(functionsAllowedTo('dynamodb:Scan')).toEqual(new Map());
    for (const action of streamReadActions) {
      expect([...functionsAllowedTo(action).keys()].sort(), action).toEqual(idsOf(streamConsumers.map((consumer) => entryOf(consumer.id))));
      expect([...functionsAllowedTo(action).values()].flat(), action).toEqual(streamConsumers.map(() => `${action} on <table>.StreamArn`));
    }
    expect(idsOf(streamConsumers.map((consumer) => entryOf(consumer.id)))).toEqual(['EventPublisher', 'RoomDelivery']);
  });

  it('gives read-only routes (ListRooms, GetHealth) no write, and a public route (GetHealth) no SQS or SNS permission at all', () => {
    for (const functionId of ['ListRooms', 'GetHealth']) {
      const grants = grantsOf(entryOf(functionId));
      expect(
        grants.filter((grant) => /^dynamodb:(Put|Update|Delete|BatchWrite)/.test(grant)),
        functionId,
      ).toEqual([]);
      expect(
        grants.filter((grant) => grant.startsWith('dynamodb:Query on ')),
        functionId,
      ).not.toEqual([]);
    }
    // Behind the edge, every API function reads the origin-verify secret, and only that one.
    expect(grantsOf(entryOf('GetHealth')).filter((grant) => /^(sqs|sns|kms|secretsmanager|states|execute-api):/.test(grant))).toEqual([
      'secretsmanager:DescribeSecret on <origin-verify secret>',
      'secretsmanager:GetSecretValue on <origin-verify secret>',
    ]);
  });

  it('lets only the events:publish function (EventPublisher) publish to SNS, on the event topic and its key', () => {
    const publishers = functionsAllowedTo('sns:Publish');

    expect([...publishers.keys()]).toEqual(idsOf(functionEntries.filter(has('events:publish'))));
    expect([...publishers.keys()]).toEqual(['EventPublisher']);
    expect([...publishers.values()].flat()).toEqual(['sns:Publish on <event topic>']);
    expect([...functionsAllowedTo('kms:GenerateDataKey*').keys()]).toEqual(['EventPublisher']);
  });

  it.each(secretIds)('lets only the functions bound to secret:%s read it; each gets its ARN, never its value', (secretId) => {
    const binding = `secret:${secretId}` as Binding;
    const readers = [...functionsAllowedTo('secretsmanager:GetSecretValue')].filter(([, grants]) =>
      grants.includes(`secretsmanager:GetSecretValue on <${secretId} secret>`),
    );
    const bound = functionEntries.filter(has(binding));

    expect(bound.length).toBeGreaterThan(0);
    expect(readers.map(([functionId]) => functionId).sort()).toEqual(idsOf(bound));
    for (const entry of functionEntries) {
      const environment = environmentOf(viewOfFunction(entry), functionOf(entry));
      expect(environment[bindingVariable(binding)], entry.id).toBe(bound.includes(entry) ? `<${secretId} secret>` : undefined);
      expect(
        Object.values(environment).filter((value) => value.includes(`<${secretId} secret>`)),
        entry.id,
      ).toHaveLength(bound.includes(entry) ? 1 : 0);
      expect(Object.keys(environment), entry.id).not.toContain(secretDefinitions[secretId].setting);
    }
  });

  it('lets the operator routes, and only them, read the operator key', () => {
    const operatorRoutes = httpRoutes.filter((route) => route.auth === 'operator').map((route) => route.id);

    expect(operatorRoutes.length).toBeGreaterThan(0);
    expect(idsOf(functionEntries.filter(has('secret:operator-key')))).toEqual(operatorRoutes.sort());
  });

  it('lets exactly the connections:manage functions, consumers included, post to connections of the prod stage only', () => {
    const managers = functionsAllowedTo('execute-api:ManageConnections');
    const expected = functionEntries.filter(has('connections:manage'));

    expect(expected.filter((entry) => entry.kind !== 'http' && entry.kind !== 'webSocket').map((entry) => entry.id)).toEqual(
      expect.arrayContaining(['RealtimeWorker', 'WatcherNotifier']),
    );
    expect([...managers.keys()].sort()).toEqual(idsOf(expected));
    for (const [functionId, grants] of managers) {
      expect(grants, functionId).toEqual([`execute-api:ManageConnections on ${connectionsArn}`]);
      expect(environmentOf(viewOf(entryOf(functionId).area), functionOf(entryOf(functionId))).CONNECTIONS_ENDPOINT).toBe(callbackUrl);
    }
    const otherExecuteApi = [...functionsAllowedTo('execute-api:Invoke').keys()];
    expect(otherExecuteApi).toEqual([]);
  });

  it('lets only the stateMachine:WebhookRetry functions (the dispatcher and the replay route) start the retry state machine', () => {
    const starters = functionsAllowedTo('states:StartExecution');
    const expected = functionEntries.filter(has('stateMachine:WebhookRetry'));

    expect(idsOf(expected)).toEqual(['ReplayWebhookDelivery', 'WebhookDispatcher']);
    expect([...starters.keys()].sort()).toEqual(idsOf(expected));
    for (const grants of starters.values()) expect(grants).toEqual(['states:StartExecution on <WebhookRetry state machine>']);
    // No other role either: the state machine's own role only invokes its tasks.
    const otherStarters = resourcesOfType('AWS::IAM::Policy').filter(({ resource }) =>
      JSON.stringify(resource.Properties.PolicyDocument).includes('"states:'),
    );
    expect(otherStarters).toHaveLength(expected.length);
  });

  it('uses no managed policies in any stack: each role writes only to its own log group', () => {
    const roles = [
      ...Object.values(main.root.findResources('AWS::IAM::Role')),
      ...resourcesOfType('AWS::IAM::Role').map(({ resource }) => resource),
    ];

    expect(roles.length).toBe(functionEntries.length + stateMachines.length);
    expect(roles.filter((role) => role.Properties.ManagedPolicyArns !== undefined)).toEqual([]);
  });

  it('grants no wildcard resource except X-Ray and state machine log delivery (neither has resource-level permissions)', () => {
    const starred = { function: new Set<string>(), stateMachine: new Set<string>(), other: new Set<string>() };
    // The log subscribers' roles are the root's (lib/constructs/chat-log-subscribers.ts); any of their views sees the root template.
    const [rootView] = main.logSubscriberViews.values();
    const rootPolicies = Object.entries(rootView?.resources ?? {})
      .filter(([, resource]) => resource.Type === 'AWS::IAM::Policy')
      .map(([id, resource]) => ({ view: rootView as NonNullable<typeof rootView>, id, resource }));
    for (const { view, resource } of [...resourcesOfType('AWS::IAM::Policy'), ...rootPolicies]) {
      for (const roleId of referencedIds(resource.Properties.Roles)) {
        const name = view.names.get(roleId) ?? '';
        const kind = name.endsWith(' role') ? 'function' : roleId.includes('StateMachineRole') ? 'stateMachine' : 'other';
        for (const grant of grantsOfRole(view, roleId).filter((candidate) => candidate.endsWith(' on *')))
          starred[kind].add(grant.replace(/ on \*$/, ''));
      }
    }

    expect(starred.function).toEqual(new Set(['xray:PutTraceSegments', 'xray:PutTelemetryRecords']));
    expect(starred.stateMachine).toEqual(
      new Set([
        'xray:PutTraceSegments',
        'xray:PutTelemetryRecords',
        'xray:GetSamplingRules',
        'xray:GetSamplingTargets',
        'logs:CreateLogDelivery',
        'logs:GetLogDelivery',
        'logs:UpdateLogDelivery',
        'logs:DeleteLogDelivery',
        'logs:ListLogDeliveries',
        'logs:PutResourcePolicy',
        'logs:DescribeResourcePolicies',
        'logs:DescribeLogGroups',
      ]),
    );
    expect(starred.other).toEqual(new Set());
    // In the root, only the log subscribers' roles have policies.
    expect(
      Object.values(main.root.findResources('AWS::IAM::Policy')).flatMap((policy) =>
        referencedIds(policy.Properties.Roles).map((roleId) => main.rootNames.get(roleId)),
      ),
    ).toEqual(logSubscribers.map((subscriber) => `${subscriber.id} role`));
  });
});
