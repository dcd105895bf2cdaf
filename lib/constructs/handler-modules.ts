import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';

/**
 * Which of the repository's modules end up in a handler's bundle, asked of the same esbuild that
 * bundles the functions (same entry, `package.json` "imports" aliases, ESM for Node 22, tree
 * shaking): a module counts when it contributes code to the output, not merely when something
 * imports it. Packages from `node_modules` are left external, since only repository modules are
 * asked about. Nothing is written to disk.
 *
 * Used by `test/infra/cdk-synth-cli.test.ts` to check the wiring table against the code: the
 * functions bound to a secret are exactly those whose bundles contain the code that reads it, and
 * the answer is itself checked against the real bundles' source maps.
 */

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));
const functionsRoot = path.join(repoRoot, 'functions');

const bundles = new Map<string, ReadonlySet<string>>();

/** Absolute paths of the repository modules that contribute code to the bundle of `handlerPath` (relative to `functions/`). */
export function bundledModules(handlerPath: string): ReadonlySet<string> {
  const entry = path.join(functionsRoot, handlerPath);
  const cached = bundles.get(entry);
  if (cached) return cached;
  const { metafile } = buildSync({
    entryPoints: [entry],
    outfile: path.join(repoRoot, 'handler-modules.out.mjs'),
    absWorkingDir: repoRoot,
    bundle: true,
    write: false,
    metafile: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    mainFields: ['module', 'main'],
    packages: 'external',
    logLevel: 'silent',
  });
  const modules = new Set<string>();
  for (const output of Object.values(metafile.outputs)) {
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (bytesInOutput > 0) modules.add(path.resolve(repoRoot, input));
    }
  }
  bundles.set(entry, modules);
  return modules;
}

/** Whether the bundle of `handlerPath` contains code of `modulePath` (both relative to `functions/`). */
export function bundlesModule(handlerPath: string, modulePath: string): boolean {
  return bundledModules(handlerPath).has(path.join(functionsRoot, modulePath));
}
