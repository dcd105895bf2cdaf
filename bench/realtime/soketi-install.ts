import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from '../util';

/**
 * Soketi, the realtime bench's opt-in baseline, is not one of the project's dependencies: it pulls
 * in the v2 AWS SDK and a native WebSocket server, which every `npm ci` would otherwise install for
 * a benchmark few runs ask for. Its folder has a manifest and a lock of its own, and the bench
 * installs it there (`npm ci`) the first time `BENCH_SOKETI=1` needs it, and again when the lock changed.
 */
export const SOKETI_DIR = join(repoRoot, 'bench', 'soketi');
/** The digest of the lock last installed, written once `npm ci` succeeded. */
const INSTALLED_STAMP = join(SOKETI_DIR, 'node_modules', '.installed-lock.sha256');

export const soketiServerScript = () => join(SOKETI_DIR, 'node_modules', '@soketi', 'soketi', 'bin', 'server.js');

/** Installs Soketi into bench/soketi unless this very lock is installed there; says so when it does. */
export function ensureSoketiInstalled(log: (line: string) => void): void {
  const lockDigest = createHash('sha256')
    .update(readFileSync(join(SOKETI_DIR, 'package-lock.json')))
    .digest('hex');
  if (existsSync(soketiServerScript()) && existsSync(INSTALLED_STAMP) && readFileSync(INSTALLED_STAMP, 'utf8') === lockDigest) return;
  log('  Soketi is not installed (the opt-in baseline lives outside the project install): npm ci in bench/soketi ...');
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: SOKETI_DIR, stdio: ['ignore', 'inherit', 'inherit'] });
  writeFileSync(INSTALLED_STAMP, lockDigest);
}
