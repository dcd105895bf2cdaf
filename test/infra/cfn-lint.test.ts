import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { App } from 'aws-cdk-lib';
import { afterAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/constructs/chat-function.ts';
import { createChatApp } from '../../lib/stacks/chat-app.ts';
import type { ChatConfig } from '../../lib/stacks/chat-config.ts';

/**
 * cfn-lint (the CloudFormation linter: resource specifications, property values, intrinsic
 * functions, best-practice rules) over every template of the cloud assembly, root and nested, as
 * `cdk synth` writes them (bundling skipped: cfn-lint reads templates, not assets). Skipped only
 * where cfn-lint is not installed; CI and the development machine have it (`pip install cfn-lint`).
 */

const cfnLint = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' });
const installed = cfnLint.status === 0;

const outdirs: string[] = [];
afterAll(() => {
  for (const outdir of outdirs) rmSync(outdir, { recursive: true, force: true });
});

function synthesizedTemplates(config: Partial<ChatConfig>): string[] {
  const cdkJson = JSON.parse(readFileSync(path.join(repoRoot, 'cdk.json'), 'utf8')) as { context: object };
  const outdir = mkdtempSync(path.join(tmpdir(), 'chat-cfn-lint-'));
  outdirs.push(outdir);
  const app = new App({ outdir, context: { ...cdkJson.context, 'aws:cdk:bundling-stacks': [] } });
  createChatApp(app, { nagChecks: false, config });
  app.synth();
  return readdirSync(outdir)
    .filter((file) => file.endsWith('.template.json'))
    .map((file) => path.join(outdir, file));
}

interface Finding {
  readonly Rule: { readonly Id: string };
  readonly Message: string;
  readonly Filename: string;
  readonly Location: { readonly Path: readonly (string | number)[] };
}

/**
 * Findings that are cfn-lint's, not the templates': each with the reason it is not a defect.
 * Anything else fails the test.
 */
const knownFindings: ReadonlyArray<{ readonly matches: (finding: Finding, resourceType: string) => boolean; readonly reason: string }> = [
  {
    matches: (finding) => finding.Rule.Id === 'W3005',
    reason: 'CDK makes each function DependsOn its role as well as reading the role with Fn::GetAtt; redundant, harmless.',
  },
  {
    matches: (finding, resourceType) =>
      finding.Rule.Id === 'E3002' && resourceType === 'AWS::CloudWatch::Dashboard' && finding.Location.Path.at(-1) === 'Tags',
    reason: "cfn-lint 1.51's resource schema predates Tags on AWS::CloudWatch::Dashboard, which aws-cdk-lib's (newer) one has.",
  },
];

describe.skipIf(!installed)(`cfn-lint ${cfnLint.stdout?.trim() ?? ''}`, () => {
  it.each([
    ['dev, defaults', {}],
    [
      'prod, with reservations, an alarm e-mail, its own domain and WAF',
      {
        stage: 'prod',
        streamReservedConcurrency: 20,
        aiReservedConcurrency: 5,
        alarmEmail: 'ops@example.com',
        // The edge variants (test/infra/chat-stack/edge.test.ts); a CloudFront web ACL needs a us-east-1 stack.
        region: 'us-east-1',
        domainName: 'chat.example.com',
        certificateArn: 'arn:aws:acm:us-east-1:123456789012:certificate/0a1b2c3d-4e5f-6789-abcd-ef0123456789',
        hostedZoneId: 'Z0123456789ABCDEFGHIJ',
        waf: true,
      },
    ],
  ] as const)(
    'finds no error or warning in any template (%s)',
    (_label, config) => {
      const templates = synthesizedTemplates(config);
      const run = spawnSync('cfn-lint', ['--format', 'json', '--', ...templates], { encoding: 'utf8', timeout: 560_000 });
      const findings = JSON.parse(run.stdout || '[]') as Finding[];
      const typeOf = (finding: Finding) => {
        const template = JSON.parse(readFileSync(finding.Filename, 'utf8')) as { Resources: Record<string, { Type: string }> };
        return finding.Location.Path[0] === 'Resources' ? (template.Resources[String(finding.Location.Path[1])]?.Type ?? '') : '';
      };
      const unexpected = findings
        .filter((finding) => !knownFindings.some((known) => known.matches(finding, typeOf(finding))))
        .map((finding) => `${path.basename(finding.Filename)} ${finding.Location.Path.join('/')}: ${finding.Rule.Id} ${finding.Message}`);

      expect(templates.length).toBeGreaterThan(1);
      expect(run.error).toBeUndefined();
      expect(run.stderr.trim()).toBe('');
      expect(unexpected).toEqual([]);
      // cfn-lint takes a minute or more over the eleven templates on a loaded machine.
    },
    600_000,
  );
});
