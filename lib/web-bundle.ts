/**
 * Browser code (`web/`: the embed widget, the demo page, the console) bundled for the browser by the
 * project's own esbuild, in memory: the local runtime bundles at start, CDK at synth, so a fresh
 * clone has no build step to forget and no generated file to keep in git.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type BuildOptions, type BuildResult, build, buildSync } from 'esbuild';
import { type ServedScript, strongEtag } from '#shared/etag';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

const options = (entry: string) =>
  ({
    absWorkingDir: repoRoot,
    entryPoints: [entry],
    bundle: true,
    write: false,
    minify: true,
    format: 'iife',
    platform: 'browser',
    // Evergreen browsers of the last three years; nothing to transpile but syntax newer than that.
    target: ['chrome110', 'firefox110', 'safari16'],
    legalComments: 'none',
    logLevel: 'silent',
  }) satisfies BuildOptions;

function bundleOf(entry: string, result: BuildResult<ReturnType<typeof options>>): ServedScript {
  const output = result.outputFiles[0];
  if (!output) throw new Error(`esbuild wrote nothing for ${entry}`);
  return { code: output.text, etag: strongEtag(output.text) };
}

/** Bundles one entry point (a path from the repository root, such as `web/widget/embed.ts`). */
export async function bundleBrowserScript(entry: string): Promise<ServedScript> {
  return bundleOf(entry, await build(options(entry)));
}

/** The same, for CDK's bundling hooks, which are synchronous. */
export function bundleBrowserScriptSync(entry: string): ServedScript {
  return bundleOf(entry, buildSync(options(entry)));
}
