import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { config } from '#shared/config';
import { type ServedScript, strongEtag } from '#shared/etag';

const loaded = new Map<string, Promise<ServedScript>>();

/**
 * A browser bundle of the wiring table (`browserBundle` of a route) by its file name, read once per
 * instance: from `WEB_BUNDLES_DIR` locally, else from beside this code, where CDK put it in the
 * function's asset (the bundle's `index.mjs` and the script share `/var/task`).
 */
export function readWebBundle(file: string): Promise<ServedScript> {
  let bundle = loaded.get(file);
  if (!bundle) {
    const dir = config.WEB_BUNDLES_DIR ?? dirname(fileURLToPath(import.meta.url));
    bundle = readFile(join(dir, file), 'utf8').then((code) => ({ code, etag: strongEtag(code) }));
    // A failed read is not kept: the next request tries again.
    bundle.catch(() => loaded.delete(file));
    loaded.set(file, bundle);
  }
  return bundle;
}
