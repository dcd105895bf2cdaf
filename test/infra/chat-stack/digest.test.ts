import { describe, expect, it } from 'vitest';
import { schedules } from '#wiring';
import { resolveChatConfig } from '../../../lib/stacks/chat-config.ts';
import { describeAreaStack } from '../../support/chat-stack/area-suite.ts';
import { expectedEnvironment, expectedGrants } from '../../support/chat-stack/expectations.ts';
import {
  entryOf,
  environmentOf,
  functionIdIn,
  grantsOfRole,
  render,
  roleOfFunction,
  type Synthesized,
  synthesize,
  synthesizedApp,
  viewOf,
} from '../../support/chat-stack/synthesized.ts';

/** The Digest area's nested stack against its entries in the wiring table (checks: `area-suite.ts`), and its schedule and SES grant. */
describeAreaStack('Digest');

const rulesOf = (synth: Synthesized) =>
  Object.entries(viewOf('Digest', synth).resources).filter(([, resource]) => resource.Type === 'AWS::Events::Rule');
const sesGrants = (synth: Synthesized) => {
  const view = viewOf('Digest', synth);
  return grantsOfRole(view, roleOfFunction(view, functionIdIn(view, 'DigestWorker'))).filter((grant) => grant.startsWith('ses:'));
};

describe('the daily digest schedule', () => {
  it('is one EventBridge rule at 08:00 UTC invoking the DailyDigest function, disabled and told so while dailyDigestEnabled is off', () => {
    // Act
    const synth = synthesizedApp();
    const view = viewOf('Digest', synth);
    const rules = rulesOf(synth);

    // Assess
    expect(schedules.find((schedule) => schedule.id === 'DailyDigest')?.cron).toBe('cron(0 8 * * ? *)');
    expect(rules).toHaveLength(1);
    const [, rule] = rules[0] as [string, { Properties: Record<string, any> }];
    expect(rule.Properties.ScheduleExpression).toBe('cron(0 8 * * ? *)');
    expect(rule.Properties.State).toBe('DISABLED');
    expect(rule.Properties.Targets.map((target: { Arn: unknown }) => render(view, target.Arn))).toEqual(['<DailyDigest function>.Arn']);
    expect(rule.Properties.Targets[0].RetryPolicy).toEqual({ MaximumRetryAttempts: 2, MaximumEventAgeInSeconds: 3600 });
    const permissions = Object.values(view.resources).filter(
      (resource) => resource.Type === 'AWS::Lambda::Permission' && resource.Properties.Principal === 'events.amazonaws.com',
    );
    expect(permissions.map((permission) => render(view, permission.Properties.FunctionName))).toEqual(['<DailyDigest function>.Arn']);
    expect(environmentOf(view, functionIdIn(view, 'DailyDigest')).DAILY_DIGEST_ENABLED).toBe('false');
  });

  it('is enabled, and its function told so, with dailyDigestEnabled=true', () => {
    // Act
    const synth = synthesize({ nagChecks: false }, { dailyDigestEnabled: 'true' });
    const view = viewOf('Digest', synth);

    // Assess
    const [[, rule] = []] = rulesOf(synth);
    expect(rule?.Properties.State).toBe('ENABLED');
    expect(environmentOf(view, functionIdIn(view, 'DailyDigest')).DAILY_DIGEST_ENABLED).toBe('true');
  });
});

describe('the SES permission of the digest worker', () => {
  it('is absent, and no sender is set, without digestEmailFrom', () => {
    // Act
    const synth = synthesizedApp();
    const view = viewOf('Digest', synth);

    // Assess
    expect(sesGrants(synth)).toEqual([]);
    expect(environmentOf(view, functionIdIn(view, 'DigestWorker')).DIGEST_EMAIL_FROM).toBeUndefined();
  });

  it('is ses:SendEmail on the configured identity alone: the address, or the domain digestEmailIdentity names', () => {
    // Act
    const byAddress = synthesize({ nagChecks: false }, { digestEmailFrom: 'digest@example.com' });
    const byDomain = synthesize({ nagChecks: false }, { digestEmailFrom: 'digest@example.com', digestEmailIdentity: 'example.com' });

    // Assess
    expect(sesGrants(byAddress)).toEqual([
      'ses:SendEmail on arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/digest@example.com',
    ]);
    expect(sesGrants(byDomain)).toEqual(['ses:SendEmail on arn:<AWS::Partition>:ses:<AWS::Region>:<AWS::AccountId>:identity/example.com']);
    const view = viewOf('Digest', byAddress);
    expect(environmentOf(view, functionIdIn(view, 'DigestWorker')).DIGEST_EMAIL_FROM).toBe('digest@example.com');
    // Every other grant and variable as the wiring table says.
    const config = resolveChatConfig({ digestEmailFrom: 'digest@example.com' });
    const worker = entryOf('DigestWorker');
    expect(grantsOfRole(view, roleOfFunction(view, functionIdIn(view, 'DigestWorker')))).toEqual(expectedGrants(worker, config));
    expect(environmentOf(view, functionIdIn(view, 'DigestWorker'))).toEqual(expectedEnvironment(worker, config));
  });

  it('rejects a sender or identity that is no address or domain', () => {
    // Assess
    expect(() => synthesize({ nagChecks: false }, { digestEmailFrom: 'not an address' })).toThrow(
      /digestEmailFrom must be an e-mail address/,
    );
    expect(() => synthesize({ nagChecks: false }, { digestEmailFrom: 'a@example.com', digestEmailIdentity: 'a b' })).toThrow(
      /digestEmailIdentity must be an e-mail address or a domain/,
    );
  });
});
