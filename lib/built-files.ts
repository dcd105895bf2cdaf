/**
 * The built files of the wiring table's routes (`builtFile` of an HTTP route): the OpenAPI document
 * and the API reference page's script. CDK writes them into the serving function's asset at synth
 * (`lib/constructs/chat-function.ts`), the local runtime into `WEB_BUNDLES_DIR` at start, so both
 * serve the same bytes and none is kept in git.
 */
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync } from 'node:fs';
import { copyFile, rename } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { BuiltFile } from '#wiring';

const repoRoot = join(dirname(fileURLToPath(import.meta.url)), '..');

/** A package's file by its path; packages' exports maps may leave out the file wanted (Scalar's browser build). */
const packageFile = (module: string) => join(repoRoot, 'node_modules', module);

/**
 * The generator runs in a child process with a bare environment: it loads every handler module,
 * whose settings must parse as on a fresh function and whose clients must not outlive it.
 */
const generator = {
  file: process.execPath,
  args: (out: string) => ['--import', 'tsx', join(repoRoot, 'lib', 'openapi', 'write-document.ts'), out],
  options: { cwd: repoRoot, env: { PATH: process.env.PATH ?? '', NODE_NO_WARNINGS: '1' }, maxBuffer: 16 * 1024 * 1024 },
};

/** Writes one built file into `dir`, synchronously (CDK's bundling hooks are). */
export function writeBuiltFileSync(built: BuiltFile, dir: string): void {
  const out = join(dir, built.file);
  if (built.kind === 'packageFile') copyFileSync(packageFile(built.module), out);
  else execFileSync(generator.file, generator.args(out), { ...generator.options, stdio: ['ignore', 'ignore', 'pipe'] });
}

/**
 * The same, without blocking: the local runtime starts its stand-ins meanwhile. The document depends
 * only on the sources it is generated from, so a runtime started again on unchanged sources (the
 * test suites start several) copies the one generated before instead of spending seconds on it.
 */
export async function writeBuiltFile(built: BuiltFile, dir: string): Promise<void> {
  const out = join(dir, built.file);
  if (built.kind === 'packageFile') return copyFile(packageFile(built.module), out);
  const cached = join(tmpdir(), `chat-openapi-${sourcesHash()}.json`);
  try {
    await copyFile(cached, out);
  } catch {
    const fresh = `${cached}.${process.pid}.${Date.now()}`;
    await promisify(execFile)(generator.file, generator.args(fresh), generator.options);
    // Renamed into place whole: a runtime starting beside this one never copies half a document.
    await rename(fresh, cached);
    await copyFile(cached, out);
  }
}

/** A digest of what the document is generated from: the functions, the generator, the package versions. */
function sourcesHash(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(repoRoot, dir), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts')) hash.update(path).update(readFileSync(join(repoRoot, path)));
    }
  };
  walk('functions');
  walk('lib/openapi');
  hash.update(readFileSync(join(repoRoot, 'package-lock.json')));
  return hash.digest('hex').slice(0, 16);
}
