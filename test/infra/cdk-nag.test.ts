import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AttributeType, Table } from 'aws-cdk-lib/aws-dynamodb';
import { Queue } from 'aws-cdk-lib/aws-sqs';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/constructs/chat-function.ts';
import { createChatApp } from '../../lib/stacks/chat-app.ts';

/**
 * cdk-nag 3 runs as a CDK validation plugin (`Validations.of(app).addPlugins(new AwsSolutionsChecks(app))`),
 * not as an Aspect: findings are not Annotations but entries of `validation-report.json` in the cloud
 * assembly, and any unacknowledged finding, error or warning, makes `app.synth()` throw.
 */

interface ValidationReport {
  pluginReports: Array<{
    pluginName: string;
    conclusion: string;
    violations: Array<{ ruleName: string; severity: string; violatingConstructs: Array<{ constructPath: string }> }>;
  }>;
}

function newApp(): App {
  const cdkJson = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: object };
  return new App({
    outdir: mkdtempSync(path.join(tmpdir(), 'chat-nag-')),
    context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] },
  });
}

/** AwsSolutions findings (errors and warnings) left unacknowledged in a synthesized assembly. */
function unacknowledgedFindings(outdir: string): string[] {
  const reportFile = path.join(outdir, 'validation-report.json');
  if (!existsSync(reportFile)) return [];
  const report = JSON.parse(readFileSync(reportFile, 'utf8')) as ValidationReport;
  return report.pluginReports
    .filter((plugin) => plugin.pluginName === 'AwsSolutions')
    .flatMap((plugin) => plugin.violations)
    .flatMap((violation) =>
      violation.violatingConstructs.map((construct) => `${violation.severity} ${violation.ruleName} ${construct.constructPath}`),
    );
}

describe('cdk-nag AwsSolutions checks', () => {
  it('leave no unacknowledged error or warning on the chat app', () => {
    // Prepare: with an alarm e-mail, without which the app warns that nobody is told (deploy-safety.test.ts)
    const app = newApp();
    const { stack } = createChatApp(app, { nagChecks: true, config: { alarmEmail: 'ops@example.com' } });

    // Act
    const assembly = app.synth();

    // Assess
    expect(unacknowledgedFindings(assembly.directory)).toEqual([]);
    // cdk-nag 2 reported through annotations; none may appear either way (nor CDK's own warnings).
    const annotations = Annotations.fromStack(stack);
    expect(annotations.findError('*', Match.anyValue())).toEqual([]);
    expect(annotations.findWarning('*', Match.anyValue())).toEqual([]);
  }, 120_000);

  it('fail the synth on a finding nobody acknowledged (the checks are live)', () => {
    // Prepare: a queue without dead-letter queue, TLS enforcement or a reason
    const app = newApp();
    const { stack } = createChatApp(app, { nagChecks: true });
    new Queue(stack, 'UnreviewedQueue');

    // Act / Assess
    expect(() => app.synth()).toThrow(/AwsSolutions-SQS3[\s\S]*UnreviewedQueue|UnreviewedQueue[\s\S]*AwsSolutions-SQS3/);
  }, 120_000);

  it('fail the synth on an unacknowledged warning as well', () => {
    // Prepare: a table without point-in-time recovery (AwsSolutions-DDB3 is warning-level; the rule reads
    // AWS::DynamoDB::Table only, so the chat table's PITR is asserted in chat-stack/root.test.ts instead)
    const app = newApp();
    const { stack } = createChatApp(app, { nagChecks: true });
    new Table(stack, 'UnreviewedTable', { partitionKey: { name: 'id', type: AttributeType.STRING } });

    // Act / Assess
    expect(() => app.synth()).toThrow(/WARNING[\s\S]*UnreviewedTable[\s\S]*AwsSolutions-DDB3/);
  }, 120_000);

  it('accept a finding acknowledged with a reason on the offending construct only', () => {
    // Prepare
    const app = newApp();
    const { stack } = createChatApp(app, { nagChecks: true });
    const queue = new Queue(stack, 'ReviewedQueue', { enforceSSL: true });
    Validations.of(queue).acknowledge({ id: 'AwsSolutions-SQS3', reason: 'Test queue: it is its own dead-letter target.' });

    // Act
    const assembly = app.synth();

    // Assess
    expect(unacknowledgedFindings(assembly.directory)).toEqual([]);
  }, 120_000);
});
