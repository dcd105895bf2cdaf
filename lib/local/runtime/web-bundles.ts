import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { HttpRoute } from '#wiring';
import { bundleBrowserScript } from '../../web-bundle.ts';

/**
 * Bundles the browser scripts of the wiring table's routes (`browserBundle`) into a fresh folder,
 * the handlers' `WEB_BUNDLES_DIR`: the same esbuild and options CDK's hook writes into the
 * function's asset, so the local handler serves the bytes a deployed one would.
 */
export async function writeWebBundles(routes: readonly HttpRoute[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'chat-web-bundles-'));
  try {
    await Promise.all(
      routes.flatMap(({ browserBundle }) =>
        browserBundle ? [bundleBrowserScript(browserBundle.entry).then(({ code }) => writeFile(join(dir, browserBundle.file), code))] : [],
      ),
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
