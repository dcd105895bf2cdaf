import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, expect, it } from 'vitest';

/**
 * Entities own their queries (docs/architecture.md): domain code calls named operations of
 * `functions/shared/db/` and never writes a DynamoDB request itself. dependency-cruiser forbids the
 * client packages under `functions/domain/` (`npm run lint:deps`); this reads the sources for what
 * an import rule cannot see: a command built or an expression written in place.
 */

const domainRoot = path.resolve(import.meta.dirname, '../../functions/domain');
const sources = readdirSync(domainRoot, { recursive: true, encoding: 'utf8' })
  .filter((file) => file.endsWith('.ts'))
  .map((file) => ({ file, text: readFileSync(path.join(domainRoot, file), 'utf8') }));

const findings = (pattern: RegExp) =>
  sources.flatMap(({ file, text }) =>
    text.split('\n').flatMap((line, index) => (pattern.test(line) ? [`functions/domain/${file}:${index + 1}: ${line.trim()}`] : [])),
  );

describe('the domain writes no DynamoDB request', () => {
  it('reads the domain sources', () => {
    expect(sources.length).toBeGreaterThan(40);
  });

  it.each([
    ['builds no command', /\bnew \w+Command\(/],
    [
      'writes no key, condition, update, filter or projection expression',
      /\b(KeyCondition|Condition|Update|Filter|Projection)Expression\b/,
    ],
    ['names no expression attributes', /\bExpressionAttribute(Names|Values)\b/],
    ['sends nothing to the table itself', /\b(TableName|TransactItems)\b/],
  ])('%s', (_label, pattern) => {
    expect(findings(pattern)).toEqual([]);
  });
});
