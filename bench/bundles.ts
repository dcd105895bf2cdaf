/**
 * Figure 3: every function's bundle, built with the local esbuild the way `ChatFunction`
 * (`lib/constructs/chat-function.ts`, a NodejsFunction) builds it, then its module init time in a
 * fresh `node` process.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { build, type Metafile } from 'esbuild';
import { eventSubscribers, httpRoutes, queueConsumers, stateMachines, streamConsumers, webSocketRoutes } from '../lib/routes/index';
import { median, round } from './stats';

export interface BundleResult {
  readonly id: string;
  readonly kind: 'http' | 'websocket' | 'queue' | 'subscriber' | 'stream' | 'task';
  readonly route: string;
  readonly handler: string;
  /** Bytes of `index.mjs` (the source map beside it is not counted). */
  readonly bytes: number;
  readonly sourceMapBytes: number;
  readonly buildMs: number;
  /** Median of the runs: `await import()` of the bundle in a fresh process. */
  readonly initMs: number;
  readonly initRunsMs: readonly number[];
  /** Median wall time of the whole `node` process (spawn to exit). */
  readonly processMs: number;
  /** The same with the `NODE_OPTIONS` ChatFunction sets on Lambda (`--enable-source-maps`), if any. */
  readonly initWithNodeOptionsMs: number | null;
  readonly initError?: string;
  /** Largest contributors to the bundle, by package (or source folder). */
  readonly topInputs: readonly { readonly name: string; readonly bytes: number }[];
}

export interface BundleOptionsUsed {
  readonly source: string;
  readonly platform: string;
  readonly format: string;
  readonly target: string;
  readonly minify: boolean;
  readonly sourcemap: boolean;
  readonly mainFields: readonly string[];
  readonly external: readonly string[];
  readonly banner: string;
  readonly esbuildVersion: string;
  /** `NODE_OPTIONS` from ChatFunction's environment, or null when it sets none. */
  readonly nodeOptions: string | null;
}

export interface BundlesResult {
  readonly options: BundleOptionsUsed;
  readonly initRuns: number;
  readonly initEnv: Record<string, string>;
  readonly nodeVersion: string;
  /** A bare `node -e` process doing nothing, for reading the process wall times. */
  readonly emptyProcessMs: number;
  readonly functions: BundleResult[];
}

/** The environment a function gets at minimum; config (`#shared/config`) is parsed at load and must accept it. */
export const INIT_ENV = {
  TABLE_NAME: 'x',
  AWS_REGION: 'us-east-1',
};

/**
 * The bundling options of `ChatFunction`: read from its source so the benchmark cannot drift from
 * what `cdk deploy` ships. Fails loudly if the construct changes shape.
 */
function chatFunctionOptions(repoRoot: string): BundleOptionsUsed & { readonly bundleAwsSdk: boolean } {
  const file = join(repoRoot, 'lib', 'constructs', 'chat-function.ts');
  const source = readFileSync(file, 'utf8');
  const banner = /const esmRequireBanner =\s*"([^"]+)"/.exec(source)?.[1];
  const target = /target:\s*'([^']+)'/.exec(source)?.[1];
  const mainFields = /mainFields:\s*\[([^\]]*)\]/.exec(source)?.[1];
  const checks = {
    banner: banner !== undefined,
    target: target !== undefined,
    mainFields: mainFields !== undefined,
    minify: /minify:\s*true/.test(source),
    sourceMap: /sourceMap:\s*true/.test(source),
    esm: /format:\s*OutputFormat\.ESM/.test(source),
  };
  const missing = Object.entries(checks).filter(([, found]) => !found);
  if (missing.length) throw new Error(`${file} no longer has the expected bundling options: ${missing.map(([k]) => k).join(', ')}`);
  const bundleAwsSdk = /bundleAwsSDK:\s*true/.test(source);
  const nodeOptions = /NODE_OPTIONS:\s*'([^']+)'/.exec(source)?.[1] ?? null;
  return {
    source: relative(repoRoot, file),
    platform: 'node',
    format: 'esm',
    target: target as string,
    minify: true,
    sourcemap: true,
    mainFields: (mainFields as string).split(',').map((field) => field.trim().replace(/'/g, '')),
    // NodejsFunction externalizes @aws-sdk/* unless bundleAwsSDK is set; ChatFunction sets it.
    external: bundleAwsSdk ? [] : ['@aws-sdk/*'],
    banner: banner as string,
    esbuildVersion: '',
    nodeOptions,
    bundleAwsSdk,
  };
}

/** `node_modules/@scope/name/...` → `@scope/name`; our own code by top folder. */
function inputGroup(path: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path.slice(path.lastIndexOf('node_modules/')));
  if (match?.[1]) return match[1];
  const [top, second] = path.split('/');
  return top === 'functions' && second ? `functions/${second}` : (top ?? path);
}

function topInputs(metafile: Metafile, id: string): { name: string; bytes: number }[] {
  const output = Object.entries(metafile.outputs).find(([name]) => name.endsWith(`/${id}/index.mjs`))?.[1];
  if (!output) return [];
  const groups = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output.inputs)) {
    const group = inputGroup(path);
    groups.set(group, (groups.get(group) ?? 0) + bytesInOutput);
  }
  return [...groups.entries()]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 8);
}

function runNode(
  args: string[],
  env: Record<string, string>,
): Promise<{ stdout: string; stderr: string; code: number | null; ms: number }> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
    child.on('error', reject);
    child.on('close', (code) => {
      clearTimeout(timer);
      resolve({ stdout, stderr, code, ms: performance.now() - started });
    });
  });
}

/**
 * Lambda's Node.js runtime gives every function an `awslambda` global; streaming handlers call
 * `awslambda.streamifyResponse` as they load, so the stand-in is there before the import is timed.
 */
const AWSLAMBDA_STAND_IN =
  'globalThis.awslambda = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } };';

const INIT_SCRIPT = (url: string) =>
  `${AWSLAMBDA_STAND_IN} const t = performance.now(); await import(${JSON.stringify(url)}); console.log('BENCH_INIT_MS=' + (performance.now() - t));`;

/** The error line of a failed import, not the minified source line Node prints above it. */
const errorLine = (output: string) =>
  (output.split('\n').find((line) => /^\w*Error\b|Error:/.test(line.trim())) ?? output.split('\n')[0] ?? '').trim().slice(0, 240);

/** Imports the bundle in `runs` fresh processes; stops at the first failure. */
async function timeInit(outfile: string, runs: number, env: Record<string, string>) {
  const times: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const run = await runNode(['--input-type=module', '-e', INIT_SCRIPT(pathToFileURL(outfile).href)], env);
    const measured = /BENCH_INIT_MS=([\d.]+)/.exec(run.stdout)?.[1];
    if (run.code !== 0 || measured === undefined) {
      return { runs: times, wall, error: errorLine(run.stderr || run.stdout) || `exit ${run.code}` };
    }
    times.push(Number(measured));
    wall.push(run.ms);
  }
  return { runs: times, wall, error: undefined };
}

export async function measureBundles(options: {
  readonly repoRoot: string;
  readonly initRuns: number;
  readonly log: (line: string) => void;
}): Promise<BundlesResult> {
  const { repoRoot, initRuns, log } = options;
  const { bundleAwsSdk: _bundled, ...used } = chatFunctionOptions(repoRoot);
  const esbuildVersion = (await import('esbuild')).version;
  const outRoot = mkdtempSync(join(tmpdir(), 'chat-bench-bundles-'));
  // A clean environment: nothing from this process (which holds the local runtime's settings) leaks in.
  const env: Record<string, string> = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...INIT_ENV };

  const entries = [
    ...httpRoutes.map((r) => ({ id: r.id, kind: 'http' as const, route: `${r.method} ${r.path}`, handler: r.handler })),
    ...webSocketRoutes.map((r) => ({ id: r.id, kind: 'websocket' as const, route: r.routeKey, handler: r.handler })),
    ...queueConsumers.map((c) => ({ id: c.id, kind: 'queue' as const, route: `queue ${c.queue}`, handler: c.handler })),
    ...eventSubscribers.map((s) => ({
      id: s.id,
      kind: 'subscriber' as const,
      route: `events ${s.eventTypes === 'all' ? 'all' : s.eventTypes.join(', ')}`,
      handler: s.handler,
    })),
    ...streamConsumers.map((c) => ({ id: c.id, kind: 'stream' as const, route: 'table stream', handler: c.handler })),
    ...stateMachines.flatMap((m) => m.tasks.map((t) => ({ id: t.id, kind: 'task' as const, route: `${m.id} task`, handler: t.handler }))),
  ];
  const functions: BundleResult[] = [];
  try {
    const empty: number[] = [];
    for (let i = 0; i < initRuns; i++) empty.push((await runNode(['--input-type=module', '-e', 'console.log(1)'], env)).ms);

    for (const entry of entries) {
      const outfile = join(outRoot, entry.id, 'index.mjs');
      const started = performance.now();
      const result = await build({
        absWorkingDir: repoRoot,
        entryPoints: [join(repoRoot, 'functions', entry.handler)],
        bundle: true,
        platform: 'node',
        format: 'esm',
        target: used.target,
        minify: used.minify,
        sourcemap: used.sourcemap,
        mainFields: [...used.mainFields],
        external: [...used.external],
        banner: { js: used.banner },
        outfile,
        metafile: true,
        logLevel: 'warning',
      });
      const buildMs = performance.now() - started;
      const plain = await timeInit(outfile, initRuns, env);
      const withOptions = used.nodeOptions ? await timeInit(outfile, initRuns, { ...env, NODE_OPTIONS: used.nodeOptions }) : undefined;
      const { runs, wall } = plain;
      const initError = plain.error ?? withOptions?.error;
      const bundle: BundleResult = {
        ...entry,
        bytes: statSync(outfile).size,
        sourceMapBytes: statSync(`${outfile}.map`).size,
        buildMs: round(buildMs, 0),
        initMs: round(median(runs), 1),
        initRunsMs: runs.map((ms) => round(ms, 1)),
        processMs: round(median(wall), 1),
        initWithNodeOptionsMs: withOptions ? round(median(withOptions.runs), 1) : null,
        ...(initError ? { initError } : {}),
        topInputs: topInputs(result.metafile, entry.id),
      };
      functions.push(bundle);
      log(
        `  ${entry.id}: ${(bundle.bytes / 1024).toFixed(1)} KB, init ${bundle.initMs} ms (${bundle.initWithNodeOptionsMs ?? '-'} ms with NODE_OPTIONS)${initError ? ` ERROR ${initError}` : ''}`,
      );
    }
    return {
      options: { ...used, esbuildVersion },
      initRuns,
      initEnv: INIT_ENV,
      nodeVersion: process.version,
      emptyProcessMs: round(median(empty), 1),
      functions,
    };
  } finally {
    rmSync(outRoot, { recursive: true, force: true });
  }
}
