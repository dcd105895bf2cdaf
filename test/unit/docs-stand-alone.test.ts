import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readDoc, repoRoot } from '../support/docs';

/**
 * The docs a reader of the repository has: README.md, sdk/README.md and docs/*.md. None may lean on
 * a document the reader does not have (the interface specification, an issue) or describe as
 * "coming later" what the service already does.
 */

const documents = [
  'README.md',
  'sdk/README.md',
  ...readdirSync(join(repoRoot, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

const OUTSIDE_REFERENCES = [
  /\bthe spec\b/i,
  /\bspec's\b/i,
  /\bspec (?:table|rule|order|areas?)\b/i,
  /\bINTERFACE\.md\b/,
  /\blater issues?\b/i,
  /\bstill to come\b/i,
  /\bcomes? with later\b/i,
];

describe.each(documents)('%s', (document) => {
  it('says things itself instead of pointing to a document the reader does not have, or to later work', () => {
    // Prepare
    const lines = readDoc(document).split('\n');

    // Act
    const offending = lines.flatMap((line, index) =>
      OUTSIDE_REFERENCES.filter((pattern) => pattern.test(line)).map(
        (pattern) => `${document}:${index + 1} ${pattern}: ${line.slice(0, 160)}`,
      ),
    );

    // Assess
    expect(offending).toEqual([]);
  });
});
