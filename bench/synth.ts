/**
 * CDK figures: how long the app takes to synthesize, and how close each stack (the root and every
 * area's nested stack) comes to CloudFormation's limits, for the app as it is and projected with
 * 150 more routes spread over the areas still to come (`test/support/area-projection.ts`, the same
 * projection the infra guard test synthesizes).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { areas, functionEntries, httpRoutes } from '../lib/routes/index';
import { projectedAreas, type StackSize, synthesizeStacks } from '../test/support/area-projection';
import { round } from './stats';

export interface SynthApp {
  readonly id: 'today' | 'projected';
  readonly label: string;
  readonly httpRoutes: number;
  readonly functions: number;
  /** `createChatApp` + `app.synth()` with cdk-nag, bundling skipped. */
  readonly synthSeconds: number;
  readonly stacks: readonly Omit<StackSize, 'templateFile'>[];
  readonly largest: { readonly stack: string; readonly resources: number };
  readonly largestTemplateKiB: number;
}

export interface SynthResult {
  readonly apps: readonly SynthApp[];
  /** `npx cdk synth` through the CLI, every function bundled by esbuild, as a deploy starts. */
  readonly cliSynthSeconds: number | null;
  readonly cliError?: string;
}

const PROJECTED_ROUTES = 150;

function measureApp(id: SynthApp['id'], label: string, extra: ReturnType<typeof projectedAreas>): SynthApp {
  const all = [...areas, ...extra];
  const { stacks, synthMs } = synthesizeStacks({ areas: all, nagChecks: true });
  const sizes = stacks.map(({ template: _template, templateFile: _file, ...size }) => size);
  const largest = [...sizes].sort((a, b) => b.resources - a.resources)[0] as Omit<StackSize, 'templateFile'>;
  return {
    id,
    label,
    httpRoutes: all.reduce((total, area) => total + (area.httpRoutes?.length ?? 0), 0),
    functions:
      functionEntries.length +
      extra.reduce((total, area) => total + (area.httpRoutes?.length ?? 0) + (area.eventSubscribers?.length ?? 0), 0),
    synthSeconds: round(synthMs / 1000, 1),
    stacks: sizes,
    largest: { stack: largest.name, resources: largest.resources },
    largestTemplateKiB: round(Math.max(...sizes.map((size) => size.templateBytes)) / 1024, 1),
  };
}

export async function measureSynth(options: {
  repoRoot: string;
  baseEnv: NodeJS.ProcessEnv;
  log: (line: string) => void;
}): Promise<SynthResult> {
  const apps = [
    measureApp('today', `today (${httpRoutes.length} HTTP routes)`, []),
    measureApp('projected', `with ${PROJECTED_ROUTES} more routes`, projectedAreas(PROJECTED_ROUTES)),
  ];
  for (const app of apps) {
    options.log(`  ${app.label}: synth ${app.synthSeconds} s, largest stack ${app.largest.stack} ${app.largest.resources} resources`);
  }
  // Offline and without credentials, as `cdk synth` must run on a fresh clone.
  const env = Object.fromEntries(
    Object.entries(options.baseEnv).filter(([name]) => !name.startsWith('AWS_') && !name.startsWith('CDK_DEFAULT_')),
  );
  const outdir = mkdtempSync(path.join(tmpdir(), 'bench-cdk-out-'));
  const started = performance.now();
  const run = spawnSync(
    process.execPath,
    [path.join(options.repoRoot, 'node_modules/aws-cdk/bin/cdk'), 'synth', '--quiet', '--no-notices', '--output', outdir],
    {
      cwd: options.repoRoot,
      env: { ...env, AWS_EC2_METADATA_DISABLED: 'true', CDK_DISABLE_VERSION_CHECK: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true' },
      encoding: 'utf8',
      timeout: 300_000,
    },
  );
  const cliSynthSeconds = run.status === 0 ? round((performance.now() - started) / 1000, 1) : null;
  rmSync(outdir, { recursive: true, force: true });
  options.log(`  cdk synth (bundled): ${cliSynthSeconds ?? `failed (${run.status})`} s`);
  return {
    apps,
    cliSynthSeconds,
    ...(cliSynthSeconds === null ? { cliError: `${run.stdout}\n${run.stderr}`.trim().split('\n').slice(-5).join(' | ') } : {}),
  };
}

/** The section of docs/performance.md. */
export function renderSynthSection(result: SynthResult): string {
  const rows = (app: SynthApp) =>
    app.stacks
      .map(
        (stack) =>
          `| ${stack.name} | ${stack.resources} | ${round(stack.templateBytes / 1024, 1)} KB | ${stack.parameters} | ${stack.outputs} |`,
      )
      .join('\n');
  const apps = result.apps
    .map(
      (app) => `### ${app.label[0]?.toUpperCase()}${app.label.slice(1)}

${app.functions} functions; synth ${app.synthSeconds} s (cdk-nag included, bundling skipped). Largest stack: ${app.largest.stack}, ${app.largest.resources} resources; largest template ${app.largestTemplateKiB} KB.

| Stack | Resources | Template | Parameters | Outputs |
| --- | --- | --- | --- | --- |
${rows(app)}`,
    )
    .join('\n\n');
  return `## CDK stacks and synth time

CloudFormation refuses a stack with more than 500 resources or a template over 1 MB (and a nested stack with more than 200 parameters or outputs); a route costs about 8 resources (function, role, policy, log group, error alarm, permission, integration, route). The root stack holds what the areas share and one nested stack per area of the wiring table, so each area counts against its own limits. The projection adds ${PROJECTED_ROUTES} routes and five event subscribers over the areas still to come, as \`test/infra/stack-limits.test.ts\` does. \`npx cdk synth\` with every function bundled (what \`cdk deploy\` starts with): ${result.cliSynthSeconds === null ? `failed: ${result.cliError}` : `${result.cliSynthSeconds} s`}.

${apps}
`;
}
