import { beforeAll, describe, expect, it } from 'vitest';
import { functionEntries, logSubscribers } from '#wiring';
import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';
import { render, resourcesOfType, type Synthesized, synthesizedApp, viewOfFunction } from '../../support/chat-stack/synthesized.ts';

/** The Stats area's nested stack against its entries in the wiring table (checks: `area-suite.ts`). */
describeAreaStack('Stats');

describe('the log subscription feeding the figure aggregator', () => {
  let main: Synthesized;
  beforeAll(() => {
    main = synthesizedApp();
  }, 120_000);

  it('subscribes the log group of every function but the subscribers to each log subscriber, with its pattern', () => {
    const filters = resourcesOfType('AWS::Logs::SubscriptionFilter').map(({ view, resource }) => ({
      group: render(view, resource.Properties.LogGroupName),
      pattern: resource.Properties.FilterPattern,
      destination: render(view, resource.Properties.DestinationArn),
    }));
    const subscribed = functionEntries.filter((entry) => entry.kind !== 'logSubscriber');

    expect(logSubscribers.map((subscriber) => subscriber.filterPattern)).toEqual(['{ $.figures = "v1" }']);
    expect(filters.sort((a, b) => a.group.localeCompare(b.group))).toEqual(
      subscribed
        .flatMap((entry) =>
          logSubscribers.map((subscriber) => ({
            group: `<${entry.id} log group>`,
            pattern: subscriber.filterPattern,
            destination: `<${subscriber.id} function>.Arn`,
          })),
        )
        .sort((a, b) => a.group.localeCompare(b.group)),
    );
    // Its own log group is not subscribed: its records would feed it back.
    expect(Object.values(main.rootResources).filter((resource) => resource.Type === 'AWS::Logs::SubscriptionFilter')).toEqual([]);
  });

  it('lets CloudWatch Logs invoke each subscriber from this account and this stage’s log groups only, before any filter exists', () => {
    const permissions = Object.entries(main.rootResources).filter(
      ([, resource]) => resource.Type === 'AWS::Lambda::Permission' && resource.Properties.Principal === 'logs.amazonaws.com',
    );

    expect(permissions).toHaveLength(logSubscribers.length);
    for (const [permissionId, { Properties }] of permissions) {
      const viewOfSubscriber = viewOfFunction(functionEntries.find((entry) => entry.kind === 'logSubscriber') as never);
      expect(render(viewOfSubscriber, Properties.FunctionName)).toBe(`<${logSubscribers[0]?.id} function>.Arn`);
      expect(Properties.Principal).toBe('logs.amazonaws.com');
      expect(Properties.SourceAccount).toEqual({ Ref: 'AWS::AccountId' });
      expect(JSON.stringify(Properties.SourceArn)).toContain(':log-group:Chat-dev-*');
      for (const view of main.views.values()) {
        expect([main.rootResources[view.stackResourceId]?.DependsOn ?? []].flat(), view.area.id).toContain(permissionId);
      }
    }
  });

  it("watches each log subscriber's errors among its area's alarms", () => {
    for (const subscriber of logSubscribers) {
      const entry = functionEntries.find((candidate) => candidate.id === subscriber.id);
      const alarms = resourcesOfType('AWS::CloudWatch::Alarm').filter(
        ({ view, resource }) =>
          view.area.id === entry?.area &&
          (resource.Properties.Dimensions ?? []).some(
            (dimension: { Value: unknown }) => render(view, dimension.Value) === `<${subscriber.id} function>`,
          ),
      );

      expect(alarms.map(({ resource }) => resource.Properties.MetricName)).toEqual(['Errors']);
    }
  });
});
