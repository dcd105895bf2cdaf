import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES } from '#shared/error-codes';
import { errorTable, TABLE_END, TABLE_START } from '../../bin/docs/error-table';
import { readDoc, repoRoot } from '../support/docs';

/**
 * docs/api.md's errors table against the codes the service answers. The compiler holds every code
 * an error is built with to `functions/shared/error-codes.ts`; these tests hold the docs to that
 * list, and the list to the source (no code listed that nothing answers, no hand-written error
 * body with a code outside it).
 */

const sourceFiles = (folder: string): string[] =>
  readdirSync(join(repoRoot, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith('.ts'))
    .map((entry) => join(entry.parentPath, entry.name));

const sources = [...sourceFiles('functions'), ...sourceFiles('lib')]
  .filter((file) => relative(repoRoot, file) !== join('functions', 'shared', 'error-codes.ts'))
  .map((file) => ({ file: relative(repoRoot, file), text: readFileSync(file, 'utf8') }));
const everySource = sources.map((source) => source.text).join('\n');

describe("docs/api.md's errors table", () => {
  it('is the one npm run docs:errors renders from the registry', () => {
    // Prepare
    const doc = readDoc('docs/api.md');
    const start = doc.indexOf(TABLE_START);
    const end = doc.indexOf(TABLE_END);

    // Assess
    expect(start, `docs/api.md keeps the marker ${TABLE_START}`).toBeGreaterThanOrEqual(0);
    expect(end).toBeGreaterThan(start);
    expect(doc.slice(start + TABLE_START.length, end).trim(), 'run npm run docs:errors').toBe(errorTable());
  });

  it('has one row per registered code, with its status', () => {
    // Prepare
    const rows = errorTable()
      .split('\n')
      .slice(2)
      .map((row) => /^\| (\d{3}) \| `([a-z0-9_]+)` \|/.exec(row)?.slice(1));

    // Assess
    expect(rows.map((row) => row?.[1]).sort()).toEqual(Object.keys(ERROR_CODES).sort());
    for (const row of rows) expect(Number(row?.[0]), row?.[1]).toBe(ERROR_CODES[row?.[1] as keyof typeof ERROR_CODES].status);
  });
});

describe('the registry of error codes', () => {
  it('lists only codes the source answers: each appears there as a literal, or as a literal prefix and a template adding the rest', () => {
    // Prepare
    const answered = (code: string) =>
      everySource.includes(`'${code}'`) ||
      code
        .split('_')
        .some(
          (_, index, parts) =>
            index > 0 &&
            everySource.includes(`'${parts.slice(0, index).join('_')}'`) &&
            new RegExp(`\\$\\{[^}]+\\}_${parts.slice(index).join('_')}\``).test(everySource),
        );

    // Assess
    expect(Object.keys(ERROR_CODES).filter((code) => !answered(code))).toEqual([]);
  });

  it('holds every code of a hand-written error body (`error: { code: ... }`)', () => {
    // Prepare
    const written = sources.flatMap(({ file, text }) =>
      [...text.matchAll(/error: \{ code: ([^,]+),/g)].flatMap((match) =>
        [...(match[1] ?? '').matchAll(/'([a-z0-9_]+)'/g)].map((literal) => ({ file, code: literal[1] as string })),
      ),
    );

    // Assess
    expect(written.length).toBeGreaterThan(5);
    expect(written.filter(({ code }) => !(code in ERROR_CODES))).toEqual([]);
  });
});
