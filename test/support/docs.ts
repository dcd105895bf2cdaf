import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Parts of the docs that tests run or hold against the code. A part is marked by an HTML comment
 * (`<!-- name -->`), invisible on the rendered page, right before its fenced block or table.
 */

export const repoRoot = fileURLToPath(new URL('../..', import.meta.url));

export const readDoc = (relativePath: string) => readFileSync(join(repoRoot, relativePath), 'utf8');

function afterMarker(doc: string, marker: string): string {
  const tag = `<!-- ${marker} -->`;
  const at = doc.indexOf(tag);
  if (at < 0) throw new Error(`no ${tag} in the document`);
  if (doc.indexOf(tag, at + tag.length) >= 0) throw new Error(`${tag} appears twice in the document`);
  return doc.slice(at + tag.length);
}

/** The fenced code block right after the marker. */
export function markedCodeBlock(doc: string, marker: string): { readonly language: string; readonly code: string } {
  const match = /^\s*```([A-Za-z]*)\n([\s\S]*?)\n```/.exec(afterMarker(doc, marker));
  if (!match) throw new Error(`no fenced code block right after <!-- ${marker} -->`);
  return { language: match[1] ?? '', code: `${match[2]}\n` };
}

/** The rows of the Markdown table right after the marker, header and separator left out, each as its trimmed cells. */
export function markedTableRows(doc: string, marker: string): string[][] {
  const lines = afterMarker(doc, marker)
    .replace(/^\s*\n/, '')
    .split('\n');
  const end = lines.findIndex((line) => !line.startsWith('|'));
  const table = lines.slice(0, end < 0 ? lines.length : end);
  if (table.length < 2) throw new Error(`no table right after <!-- ${marker} -->`);
  return table.slice(2).map((line) =>
    line
      .slice(1, line.endsWith('|') ? -1 : undefined)
      .split(/(?<!\\)\|/)
      .map((cell) => cell.trim()),
  );
}
