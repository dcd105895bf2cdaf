/**
 * CDK stacks and synth time: how long the app takes to synthesize, and how close each stack (the
 * root and every area's nested stack) comes to CloudFormation's limits, for the app as it is and
 * projected with 150 more routes spread over the areas still to come
 * (`test/support/area-projection.ts`, the same projection the infra guard test synthesizes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { areas, functionEntries, httpRoutes } from '#wiring';
import { alarmCost, alarmPrices } from '../lib/constructs/alarm-cost';
import { DEFAULT_PING_INTERVAL_MS } from '../sdk/settings';
import { projectedAreas, synthesizeStacks } from '../test/support/area-projection';
import { type Bench, fmt, GOALS } from './harness';
import { idleConnectionHour, launch, repoRoot, round, sum } from './util';

const PROJECTED_ROUTES = 150;

type Resource = { Type: string; Properties?: Record<string, unknown> };

/**
 * What an idle connection costs in Lambda, read from the synthesized templates: the SDK sends
 * `{ "type": "ping" }` every `DEFAULT_PING_INTERVAL_MS`; API Gateway selects a route on the
 * WebSocket API's route selection expression, and a ping runs a function unless it selects a
 * route whose integration is a MOCK.
 */
function keepAlives(stacks: readonly { template: { Resources: Record<string, Resource> } }[]) {
  const resources = stacks.flatMap(({ template }) => Object.entries(template.Resources));
  const api = resources.find(([, r]) => r.Type === 'AWS::ApiGatewayV2::Api' && r.Properties?.ProtocolType === 'WEBSOCKET')?.[1];
  const selection = String(api?.Properties?.RouteSelectionExpression ?? '$request.body.action');
  const pingRoute = resources.find(([, r]) => r.Type === 'AWS::ApiGatewayV2::Route' && r.Properties?.RouteKey === 'ping')?.[1];
  const target = JSON.stringify(pingRoute?.Properties?.Target ?? '');
  const integration = resources.find(([id, r]) => r.Type === 'AWS::ApiGatewayV2::Integration' && target.includes(`"${id}"`))?.[1];
  const answeredByApiGateway = selection === '$request.body.type' && integration?.Properties?.IntegrationType === 'MOCK';
  const { pingsPerHour } = idleConnectionHour(0);
  return {
    routeSelectionExpression: selection,
    pingIntegration: String(integration?.Properties?.IntegrationType ?? '$default (Lambda)'),
    pingsPerHour,
    idleInvocationsPerHour: answeredByApiGateway ? 0 : pingsPerHour,
  };
}

/** `createChatApp` + `app.synth()` with cdk-nag, bundling skipped. */
function measureApp(id: 'today' | 'projected', label: string, extra: ReturnType<typeof projectedAreas>) {
  const all = [...areas, ...extra];
  const { stacks, synthMs } = synthesizeStacks({ areas: all, nagChecks: true });
  const sizes = stacks.map(({ template: _template, templateFile: _file, ...size }) => size);
  const largest = [...sizes].sort((a, b) => b.resources - a.resources)[0] as (typeof sizes)[number];
  const routesOf = (area: (typeof all)[number]) => area.httpRoutes?.length ?? 0;
  return {
    id,
    label,
    httpRoutes: sum(all.map(routesOf)),
    functions: functionEntries.length + sum(extra.map((area) => routesOf(area) + (area.eventSubscribers?.length ?? 0))),
    synthSeconds: round(synthMs / 1000, 1),
    stacks: sizes,
    largest: { stack: largest.name, resources: largest.resources },
    largestTemplateKiB: round(Math.max(...sizes.map((size) => size.templateBytes)) / 1024, 1),
    keepAlives: keepAlives(stacks),
    alarms: alarmCost(stacks.map(({ template }) => template)),
  };
}

async function measure(baseEnv: NodeJS.ProcessEnv, log: (line: string) => void) {
  const apps = [
    measureApp('today', `today (${httpRoutes.length} HTTP routes)`, []),
    measureApp('projected', `with ${PROJECTED_ROUTES} more routes`, projectedAreas(PROJECTED_ROUTES)),
  ];
  for (const app of apps)
    log(`  ${app.label}: synth ${app.synthSeconds} s, largest stack ${app.largest.stack} ${app.largest.resources} resources`);
  // Offline and without credentials, as `cdk synth` must run on a fresh clone.
  const env = Object.fromEntries(Object.entries(baseEnv).filter(([name]) => !name.startsWith('AWS_') && !name.startsWith('CDK_DEFAULT_')));
  const outdir = mkdtempSync(join(tmpdir(), 'bench-cdk-out-'));
  const cdk = launch(
    process.execPath,
    [join(repoRoot, 'node_modules/aws-cdk/bin/cdk'), 'synth', '--quiet', '--no-notices', '--output', outdir],
    {
      env: { ...env, AWS_EC2_METADATA_DISABLED: 'true', CDK_DISABLE_VERSION_CHECK: 'true', CDK_DISABLE_CLI_TELEMETRY: 'true' },
    },
  );
  const timer = setTimeout(() => cdk.child.kill('SIGKILL'), 300_000);
  const code = await cdk.exited;
  clearTimeout(timer);
  rmSync(outdir, { recursive: true, force: true });
  /** `npx cdk synth` through the CLI, every function bundled by esbuild, as a deploy starts. */
  const cliSynthSeconds = code === 0 ? round(cdk.ms() / 1000, 1) : null;
  log(`  cdk synth (bundled): ${cliSynthSeconds ?? `failed (${code})`} s`);
  return {
    apps,
    cliSynthSeconds,
    ...(cliSynthSeconds === null ? { cliError: cdk.output().trim().split('\n').slice(-5).join(' | ') } : {}),
  };
}

type Synth = Awaited<ReturnType<typeof measure>>;

export const synth: Bench<Synth> = {
  id: 'synth',
  name: 'CDK synth',
  needs: 'machine',
  run: ({ baseEnv, log }) => measure(baseEnv, log),

  goals: ({ apps }) => [
    ...apps.map((app) => ({
      id: `stacks.${app.id}`,
      name: `Largest stack, ${app.label}`,
      target: `≤ ${GOALS.resourcesPerStack} resources, ≤ ${GOALS.templateKiB} KB`,
      measured: `${app.largest.resources} resources (${app.largest.stack}), largest template ${fmt(app.largestTemplateKiB)} KB`,
      pass: app.largest.resources <= GOALS.resourcesPerStack && app.largestTemplateKiB <= GOALS.templateKiB,
    })),
    ...apps
      .filter((app) => app.id === 'today')
      .map(({ keepAlives: k }) => ({
        id: 'keepAlives.idleInvocations',
        name: 'Lambda invocations per connection-hour while idle (AWS, from the template and SDK settings)',
        target: '0',
        measured: `${fmt(k.idleInvocationsPerHour, 0)} (${fmt(k.pingsPerHour, 0)} pings an hour, routed on \`${k.routeSelectionExpression}\` to a ${k.pingIntegration} integration)`,
        pass: k.idleInvocationsPerHour === 0,
      })),
  ],

  section(result) {
    const apps = result.apps.map(
      (app) => `### ${app.label[0]?.toUpperCase()}${app.label.slice(1)}

${app.functions} functions; synth ${app.synthSeconds} s (cdk-nag included, bundling skipped). Largest stack: ${app.largest.stack}, ${app.largest.resources} resources; largest template ${app.largestTemplateKiB} KB.

Alarms: ${app.alarms.alarms} alarms reading ${app.alarms.alarmMetrics} metrics and ${app.alarms.compositeAlarms} composite alarms, $${app.alarms.monthlyDollars.toFixed(2)} a month at CloudWatch list prices ($${alarmPrices.perAlarmMetric.toFixed(2)} per alarm metric, $${alarmPrices.perCompositeAlarm.toFixed(2)} per composite alarm; \`lib/constructs/alarm-cost.ts\`).

| Stack | Resources | Template | Parameters | Outputs |
| --- | --- | --- | --- | --- |
${app.stacks.map((stack) => `| ${stack.name} | ${stack.resources} | ${round(stack.templateBytes / 1024, 1)} KB | ${stack.parameters} | ${stack.outputs} |`).join('\n')}`,
    );
    return `## CDK stacks and synth time

CloudFormation refuses a stack with more than 500 resources or a template over 1 MB (and a nested stack with more than 200 parameters or outputs); a route costs about 8 resources (function, role, policy, log group, error alarm, permission, integration, route). The root stack holds what the areas share and one nested stack per area of the wiring table, so each area counts against its own limits. The projection adds ${PROJECTED_ROUTES} routes and five event subscribers in new areas, as \`test/infra/stack-limits.test.ts\` does. \`npx cdk synth\` with every function bundled (what \`cdk deploy\` starts with): ${result.cliSynthSeconds === null ? `failed: ${result.cliError}` : `${result.cliSynthSeconds} s`}.

${apps.join('\n\n')}

### Keep-alives

${keepAliveText(result.apps.find((app) => app.id === 'today')?.keepAlives)}`;
  },
};

function keepAliveText(k: ReturnType<typeof keepAlives> | undefined): string {
  if (!k) return '_Not measured._';
  const hour = idleConnectionHour(k.idleInvocationsPerHour);
  return `The SDK pings every ${fmt(DEFAULT_PING_INTERVAL_MS / 60_000, 0)} minutes (\`pingIntervalMs\`, half API Gateway's 10-minute idle timeout): ${fmt(k.pingsPerHour, 0)} pings an hour per connection. The WebSocket API selects routes on \`${k.routeSelectionExpression}\`, and the \`ping\` route's integration is ${k.pingIntegration}: **${fmt(k.idleInvocationsPerHour, 0)} Lambda invocations** per idle connection-hour (before this design: 120, every 30 s ping running \`$default\`, a DynamoDB read and a posted pong). An idle connection-hour costs ${hour.lines.map(([name, dollars]) => `${name} $${dollars.toPrecision(2)}`).join(', ')}: $${hour.total.toPrecision(2)} in all.`;
}
