import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

/** Directories that hold no package of this repository: installs, build output, local data. */
const notOurs = new Set(['node_modules', 'cdk.out', 'coverage', 'dist']);

/** Every `package.json` of the repository (the root, `sdk/`, and any workspace added later). */
function packageFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.isDirectory()) return entry.name.startsWith('.') || notOurs.has(entry.name) ? [] : packageFiles(path.join(dir, entry.name));
    return entry.name === 'package.json' ? [path.join(dir, entry.name)] : [];
  });
}

describe('license', () => {
  it('is the Apache License 2.0, word for word, in LICENSE at the root', () => {
    const text = readFileSync(path.join(repoRoot, 'LICENSE'), 'utf8');

    expect(text).toContain('Apache License\n                           Version 2.0, January 2004');
    // The text apache.org publishes (LICENSE-2.0.txt), unchanged.
    expect(createHash('md5').update(text).digest('hex')).toBe('3b83ef96387f14655fc854ddc3c6bd57');
  });

  it('is declared as Apache-2.0 in every package.json of the repository', () => {
    const files = packageFiles(repoRoot);

    expect(files).toContain(path.join(repoRoot, 'package.json'));
    expect(
      files
        .filter((file) => (JSON.parse(readFileSync(file, 'utf8')) as { license?: unknown }).license !== 'Apache-2.0')
        .map((file) => path.relative(repoRoot, file)),
    ).toEqual([]);
  });
});
