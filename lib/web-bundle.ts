/**
 * Browser code (`web/`: the embed widget, the demo page, the console) bundled for the browser by the
 * project's own esbuild, in memory: the local runtime bundles at start, CDK at synth, so a fresh
 * clone has no build step to forget and no generated file to keep in git.
 */
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

export interface WebBundle {
  /** The script, minified, one IIFE with no imports left. */
  readonly code: string;
  /** A strong validator of `code`, quoted as an HTTP `ETag`. */
  readonly etag: string;
}

/** Bundles one entry point (a path from the repository root, such as `web/widget/embed.ts`). */
export async function bundleBrowserScript(entry: string): Promise<WebBundle> {
  const result = await build({
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
  });
  const output = result.outputFiles[0];
  if (!output) throw new Error(`esbuild wrote nothing for ${entry}`);
  const code = output.text;
  return { code, etag: `"${createHash('sha256').update(code).digest('base64url').slice(0, 27)}"` };
}
