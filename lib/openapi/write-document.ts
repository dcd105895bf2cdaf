/**
 * Writes the OpenAPI document to the file named by its argument, or to stdout: run in a process of
 * its own (`lib/built-files.ts`) so that loading every handler module never touches the settings,
 * module state or event loop of the CDK app or the local runtime. `npm run -s docs:openapi`.
 */
import { writeFileSync } from 'node:fs';
import { generateOpenApiDocument } from './document.ts';

const out = process.argv[2];
const text = `${JSON.stringify(await generateOpenApiDocument())}\n`;
// Handler modules may hold clients with open sockets or timers: the document is all this process is
// for, so it exits once the text is out. A pipe takes stdout asynchronously: exiting before the
// write's callback would cut the document at the pipe's buffer (64–128 KB).
if (out) {
  writeFileSync(out, text);
  process.exit(0);
} else {
  process.stdout.write(text, () => process.exit(0));
}
