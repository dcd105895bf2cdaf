/**
 * Section 3: every function's bundle, built with the local esbuild from the settings `ChatFunction`
 * exports (`chatFunctionBuild` of lib/constructs/chat-function.ts, what `cdk deploy` ships), then
 * its module init time in fresh `node` processes. `bundleFunctions` is also what
 * test/infra/bundle-size.test.ts builds.
 */
import { mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { OutputFormat } from 'aws-cdk-lib/aws-lambda-nodejs';
import { type BuildOptions, build, version as esbuildVersion, type Metafile } from 'esbuild';
import { eventSubscribers, httpRoutes, queueConsumers, stateMachines, streamConsumers, webSocketRoutes } from '#wiring';
import { chatFunctionBuild, functionsDir, repoRoot } from '../lib/constructs/chat-function';
import { type Bench, fmt, GOALS, kib, mark, table } from './harness';
import { launch, median, round } from './util';

/** Every function of the wiring table, by kind, with what invokes it. */
export const bundledFunctions = [
  ...httpRoutes.map((r) => ({ id: r.id, route: `${r.method} ${r.path}`, handler: r.handler })),
  ...webSocketRoutes.map((r) => ({ id: r.id, route: r.routeKey, handler: r.handler })),
  ...queueConsumers.map((c) => ({ id: c.id, route: `queue ${c.queue}`, handler: c.handler })),
  ...eventSubscribers.map((s) => ({
    id: s.id,
    route: `events ${s.eventTypes === 'all' ? 'all' : s.eventTypes.join(', ')}`,
    handler: s.handler,
  })),
  ...streamConsumers.map((c) => ({ id: c.id, route: 'table stream', handler: c.handler })),
  ...stateMachines.flatMap((m) => m.tasks.map((t) => ({ id: t.id, route: `${m.id} task`, handler: t.handler }))),
];

const { bundling } = chatFunctionBuild;

/** What NodejsFunction hands esbuild for ChatFunction's `bundling` props (aws-lambda-nodejs `Bundling`). */
export const esbuildOptions = {
  absWorkingDir: repoRoot,
  bundle: true,
  platform: 'node',
  format: bundling.format === OutputFormat.ESM ? 'esm' : 'cjs',
  target: bundling.target,
  minify: bundling.minify,
  sourcemap: bundling.sourceMap,
  mainFields: bundling.mainFields,
  // NodejsFunction leaves @aws-sdk/* out unless bundleAwsSDK is set.
  external: bundling.bundleAwsSDK ? [] : ['@aws-sdk/*'],
  banner: { js: bundling.banner },
  alias: chatFunctionBuild.aliases,
  logLevel: 'warning',
} satisfies BuildOptions;

/**
 * Builds each function to `<outDir>/<id>/index.mjs` (with its source map beside it), one esbuild
 * run per function as `cdk deploy` does, `concurrency` at a time.
 */
export async function bundleFunctions(outDir: string, concurrency = 4) {
  const queue = [...bundledFunctions];
  const built: ((typeof queue)[number] & { outfile: string; bytes: number; buildMs: number; metafile: Metafile })[] = [];
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      for (let fn = queue.shift(); fn; fn = queue.shift()) {
        const outfile = join(outDir, fn.id, 'index.mjs');
        const started = performance.now();
        const { metafile } = await build({ ...esbuildOptions, entryPoints: [join(functionsDir, fn.handler)], outfile, metafile: true });
        built.push({ ...fn, outfile, bytes: statSync(outfile).size, buildMs: performance.now() - started, metafile });
      }
    }),
  );
  return bundledFunctions.map((fn) => built.find((b) => b.id === fn.id) as (typeof built)[number]);
}

/**
 * Every function's bundle from one esbuild run with an entry point per function, for
 * test/infra/bundle-size.test.ts: byte for byte what {@link bundleFunctions} writes (without code
 * splitting each output stands alone), in a fraction of the CPU, since esbuild parses a module the
 * functions share (the AWS SDK above all) once. A bundle's `inputs` are the modules its entry
 * reaches in the run's import graph, which is what the metafile of a run of its own lists. No
 * build times: the bench times one run per function, as `cdk deploy` makes them.
 */
export async function bundleAllFunctions(outDir: string) {
  const { metafile } = await build({
    ...esbuildOptions,
    entryPoints: bundledFunctions.map((fn) => ({ in: join(functionsDir, fn.handler), out: join(fn.id, 'index') })),
    outdir: outDir,
    outExtension: { '.js': '.mjs' },
    metafile: true,
  });
  const reached = (entry: string) => {
    const seen = new Set<string>();
    for (const queue = [entry]; queue.length > 0; ) {
      const file = queue.pop() as string;
      if (seen.has(file)) continue;
      seen.add(file);
      for (const imported of metafile.inputs[file]?.imports ?? []) if (!imported.external) queue.push(imported.path);
    }
    return [...seen];
  };
  const entries = new Map(Object.values(metafile.outputs).flatMap((output) => (output.entryPoint ? [[output.entryPoint, output]] : [])));
  return bundledFunctions.map((fn) => {
    const outfile = join(outDir, fn.id, 'index.mjs');
    const entry = relative(repoRoot, join(functionsDir, fn.handler)).replaceAll('\\', '/');
    if (!entries.has(entry)) throw new Error(`no output for ${fn.id} (${entry})`);
    return { ...fn, outfile, bytes: statSync(outfile).size, inputs: reached(entry) };
  });
}

/** The environment a function gets at minimum; config (`#shared/config`) is parsed at load and must accept it. */
const INIT_ENV = { TABLE_NAME: 'x', AWS_REGION: 'us-east-1' };

/**
 * Lambda's Node.js runtime gives every function an `awslambda` global; streaming handlers call
 * `awslambda.streamifyResponse` as they load, so the stand-in is there before the import is timed.
 */
const initScript = (url: string) =>
  `globalThis.awslambda = { streamifyResponse: (handler) => handler, HttpResponseStream: { from: (stream) => stream } }; const t = performance.now(); await import(${JSON.stringify(url)}); console.log('BENCH_INIT_MS=' + (performance.now() - t));`;

/** The error line of a failed import, not the minified source line Node prints above it. */
const errorLine = (output: string) =>
  (output.split('\n').find((line) => /^\w*Error\b|Error:/.test(line.trim())) ?? output.split('\n')[0] ?? '').trim().slice(0, 240);

/** Runs `node -e script` `runs` times in a clean environment; stops at the first failure. */
async function timeNode(script: string, runs: number, env: Record<string, string>) {
  const init: number[] = [];
  const wall: number[] = [];
  for (let i = 0; i < runs; i++) {
    const child = launch(process.execPath, ['--input-type=module', '-e', script], { env });
    const timer = setTimeout(() => child.child.kill('SIGKILL'), 20_000);
    const code = await child.exited;
    clearTimeout(timer);
    const measured = /BENCH_INIT_MS=([\d.]+)/.exec(child.output())?.[1];
    if (code !== 0 || measured === undefined) return { init, wall, error: errorLine(child.output()) || `exit ${code}` };
    init.push(Number(measured));
    wall.push(child.ms());
  }
  return { init, wall, error: undefined };
}

/** `node_modules/@scope/name/...` → `@scope/name`; our own code by top folder. */
function inputGroup(path: string): string {
  const match = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(path.slice(path.lastIndexOf('node_modules/')));
  if (match?.[1]) return match[1];
  const [top, second] = path.split('/');
  return top === 'functions' && second ? `functions/${second}` : (top ?? path);
}

/** Largest contributors to a bundle, by package (or source folder). */
function topInputs(metafile: Metafile, id: string) {
  const output = Object.entries(metafile.outputs).find(([name]) => name.endsWith(`/${id}/index.mjs`))?.[1];
  const groups = new Map<string, number>();
  for (const [path, { bytesInOutput }] of Object.entries(output?.inputs ?? {}))
    groups.set(inputGroup(path), (groups.get(inputGroup(path)) ?? 0) + bytesInOutput);
  return [...groups.entries()]
    .map(([name, bytes]) => ({ name, bytes }))
    .sort((a, b) => b.bytes - a.bytes)
    .slice(0, 8);
}

async function measure(initRuns: number, log: (line: string) => void) {
  const outDir = mkdtempSync(join(tmpdir(), 'chat-bench-bundles-'));
  // A clean environment: nothing from this process (which held the local runtime's settings) leaks in.
  const env = { PATH: process.env.PATH ?? '/usr/bin:/bin', ...INIT_ENV };
  try {
    const empty = await timeNode("console.log('BENCH_INIT_MS=0')", initRuns, env);
    const functions = [];
    for (const fn of await bundleFunctions(outDir)) {
      const script = initScript(pathToFileURL(fn.outfile).href);
      const plain = await timeNode(script, initRuns, env);
      const withOptions = await timeNode(script, initRuns, { ...env, NODE_OPTIONS: chatFunctionBuild.nodeOptions });
      const initError = plain.error ?? withOptions.error;
      functions.push({
        id: fn.id,
        route: fn.route,
        handler: fn.handler,
        /** Bytes of `index.mjs` (the source map beside it is not counted). */
        bytes: fn.bytes,
        sourceMapBytes: statSync(`${fn.outfile}.map`).size,
        buildMs: round(fn.buildMs, 0),
        /** Median of the runs: `await import()` of the bundle in a fresh process. */
        initMs: round(median(plain.init), 1),
        initRunsMs: plain.init.map((ms) => round(ms, 1)),
        /** Median wall time of the whole `node` process (spawn to exit). */
        processMs: round(median(plain.wall), 1),
        /** The same with the `NODE_OPTIONS` ChatFunction sets on Lambda (`--enable-source-maps`). */
        initWithNodeOptionsMs: round(median(withOptions.init), 1),
        ...(initError ? { initError } : {}),
        topInputs: topInputs(fn.metafile, fn.id),
      });
      const last = functions.at(-1);
      log(
        `  ${fn.id}: ${fmt(kib(fn.bytes))} KB, init ${last?.initMs} ms (${last?.initWithNodeOptionsMs} ms with NODE_OPTIONS)${initError ? ` ERROR ${initError}` : ''}`,
      );
    }
    return {
      esbuildVersion,
      initRuns,
      initEnv: INIT_ENV,
      nodeVersion: process.version,
      emptyProcessMs: round(median(empty.wall), 1),
      functions,
    };
  } finally {
    rmSync(outDir, { recursive: true, force: true });
  }
}

type Bundles = Awaited<ReturnType<typeof measure>>;
type Fn = Bundles['functions'][number];

const initPasses = (f: Fn) => !f.initError && f.initMs <= GOALS.initMs && f.initWithNodeOptionsMs <= GOALS.initMs;
const slowest = (functions: readonly Fn[], by: (f: Fn) => number) => [...functions].sort((a, b) => by(b) - by(a))[0];

export const bundles: Bench<Bundles> = {
  id: 'bundles',
  name: 'Bundles',
  needs: 'machine',
  run: ({ settings, log }) => measure(settings.initRuns, log),

  goals({ functions }) {
    const largest = slowest(functions, (f) => f.bytes);
    const oversize = functions.filter((f) => kib(f.bytes) > GOALS.bundleKiB);
    const init = (label: string, name: string, by: (f: Fn) => number) => {
      const worst = slowest(functions, by);
      const failing = functions.filter((f) => f.initError || !(by(f) <= GOALS.initMs));
      return {
        id: `bundle.${label}`,
        name,
        target: `≤ ${GOALS.initMs} ms each`,
        measured: worst
          ? `slowest ${fmt(by(worst))} ms (${worst.id})${failing.length ? `; ${failing.length} over or failing` : ''}`
          : 'none',
        pass: functions.length > 0 && failing.length === 0,
      };
    };
    return [
      {
        id: 'bundle.size',
        name: `Bundle size, all ${functions.length} functions`,
        target: `≤ ${GOALS.bundleKiB} KB each`,
        measured: largest
          ? `largest ${fmt(kib(largest.bytes))} KB (${largest.id})${oversize.length ? `; ${oversize.length} over` : ''}`
          : 'none',
        pass: functions.length > 0 && oversize.length === 0,
      },
      init('init', `Module init, all ${functions.length} functions`, (f) => f.initMs),
      init(
        'initNodeOptions',
        `Module init with ChatFunction's \`NODE_OPTIONS=${chatFunctionBuild.nodeOptions}\``,
        (f) => f.initWithNodeOptionsMs,
      ),
    ];
  },

  misses(missed, { functions }) {
    return missed.flatMap((goal) => {
      if (goal.id === 'bundle.init') {
        const over = functions.filter((f) => f.initError || f.initMs > GOALS.initMs);
        return over.map(
          (f) => `- **${f.id}** init ${f.initError ? `failed: ${f.initError}` : `${fmt(f.initMs)} ms (runs: ${f.initRunsMs.join(', ')})`}.`,
        );
      }
      if (goal.id !== 'bundle.size') return [`- **${goal.name}**: ${goal.measured}.`];
      const over = functions.filter((f) => kib(f.bytes) > GOALS.bundleKiB);
      // Per package: its range over the oversize bundles, largest first.
      const byPackage = new Map<string, number[]>();
      for (const f of over) for (const input of f.topInputs) byPackage.set(input.name, [...(byPackage.get(input.name) ?? []), input.bytes]);
      const parts = [...byPackage.entries()]
        .sort((a, b) => Math.max(...b[1]) - Math.max(...a[1]))
        .slice(0, 6)
        .map(([name, sizes]) => {
          const [low, high] = [fmt(kib(Math.min(...sizes))), fmt(kib(Math.max(...sizes)))];
          return `${name} ${low === high ? low : `${low}–${high}`} KB${sizes.length < over.length ? ` (in ${sizes.length})` : ''}`;
        });
      const sizes = over.map((f) => kib(f.bytes));
      return [
        `- **${goal.name}**: ${over.length} of ${functions.length} over, ${fmt(Math.min(...sizes))}–${fmt(Math.max(...sizes))} KB. Largest contributors across them: ${parts.join(', ')}.`,
      ];
    });
  },

  section(b) {
    const rows = b.functions.map((f) => [
      f.id,
      `\`${f.route}\``,
      fmt(kib(f.bytes)),
      f.initError ? `error: ${f.initError}` : fmt(f.initMs),
      fmt(f.initWithNodeOptionsMs),
      fmt(f.processMs, 0),
      mark(kib(f.bytes) <= GOALS.bundleKiB),
      mark(initPasses(f)),
    ]);
    const largest = slowest(b.functions, (f) => f.bytes);
    const composition = largest
      ? `What the largest bundle (${largest.id}, ${fmt(kib(largest.bytes))} KB) is made of, minified bytes by package:\n\n${table(
          'Package or folder | KB | Share',
          largest.topInputs.map((input) => [input.name, fmt(kib(input.bytes)), `${fmt((input.bytes / largest.bytes) * 100, 0)} %`]),
        )}`
      : '';
    const env = Object.entries(b.initEnv)
      .map(([k, v]) => `\`${k}=${v}\``)
      .join(', ');
    const o = esbuildOptions;
    return `## 3. Bundle size and module init

Each function of the wiring table (\`httpRoutes\`, \`webSocketRoutes\`, \`queueConsumers\` and the \`stateMachines\` tasks) is bundled with the local esbuild ${b.esbuildVersion} using the settings \`ChatFunction\` exports (\`chatFunctionBuild\` in \`lib/constructs/chat-function.ts\`, the same build \`test/infra/bundle-size.test.ts\` checks against the size goal): platform ${o.platform}, format ${o.format}, target ${o.target}, bundle, minify, source map (written beside the bundle, not counted), main fields ${o.mainFields.join(',')}, ${o.external.length ? `external ${o.external.join(', ')}` : 'no externals (the AWS SDK v3 is bundled, `bundleAwsSDK: true`)'}, and the \`createRequire\` banner. Size is the bytes of \`index.mjs\` (KB = 1,024 bytes). Init is the median of ${b.initRuns} fresh \`node\` processes (${b.nodeVersion}) timing \`await import()\` of the bundle with only ${env} set (configuration is parsed at load and must accept that); "process" is the median wall time of the whole \`node\` process, spawn to exit, where an empty \`node -e\` takes ${fmt(b.emptyProcessMs, 0)} ms. ChatFunction also sets \`NODE_OPTIONS=${chatFunctionBuild.nodeOptions}\` on Lambda, which makes Node load each bundle's source map at import; the second init column is measured that way. Lambda runs Node 22 on ARM64 and adds its own runtime bootstrap, so these are the module's share of a cold start on this machine, not a Lambda measurement.

${table(`Function | Route | Size KB | Init ms | Init ms, \`${chatFunctionBuild.nodeOptions}\` | Process ms | ≤ ${GOALS.bundleKiB} KB | ≤ ${GOALS.initMs} ms`, rows)}

${composition}`;
  },
};
