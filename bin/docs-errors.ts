/**
 * Writes the errors table of docs/api.md from `functions/shared/error-codes.ts`:
 *
 *   npm run docs:errors            rewrite the table in place
 *   npm run docs:errors -- --check exit 1 when the table differs from the codes (CI, tests)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { withErrorTable } from './docs/error-table';

const path = new URL('../docs/api.md', import.meta.url);
const current = readFileSync(path, 'utf8');
const wanted = withErrorTable(current);

if (process.argv.includes('--check')) {
  if (wanted !== current) {
    console.error('docs/api.md: the errors table differs from functions/shared/error-codes.ts; run npm run docs:errors');
    process.exit(1);
  }
  console.log('docs/api.md: the errors table is current');
} else if (wanted === current) {
  console.log('docs/api.md: the errors table is current');
} else {
  writeFileSync(path, wanted);
  console.log('docs/api.md: errors table rewritten');
}
