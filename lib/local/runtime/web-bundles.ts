import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpRoute } from '#wiring';
import { writeBuiltFile } from '../../built-files.ts';
import { bundleBrowserScript } from '../../web-bundle.ts';

/**
 * Bundles the browser scripts of the wiring table's routes (`browserBundle`) and writes their built
 * files (`builtFile`: the OpenAPI document, the API reference script) into a fresh folder, the
 * handlers' `WEB_BUNDLES_DIR`: the same builds CDK's hook writes into the function's asset, so the
 * local handler serves the bytes a deployed one would.
 */
export async function writeWebBundles(routes: readonly HttpRoute[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-web-bundles-'));
  try {
    await Promise.all(
      routes.flatMap(({ browserBundle, builtFile }) => [
        ...(browserBundle
          ? [bundleBrowserScript(browserBundle.entry).then(({ code }) => writeFile(join(dir, browserBundle.file), code))]
          : []),
        ...(builtFile ? [writeBuiltFile(builtFile, dir)] : []),
      ]),
    );
  } catch (error) {
    await removeWebBundles(dir);
    throw error;
  }
  return dir;
}

export function removeWebBundles(dir: string): Promise<void> {
  return rm(dir, { recursive: true, force: true });
}
