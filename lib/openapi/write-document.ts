/**
 * Writes the OpenAPI document to the file named by its argument, or to stdout: run in a process of
 * its own (`lib/built-files.ts`) so that loading every handler module never touches the settings,
 * module state or event loop of the CDK app or the local runtime. `npm run -s docs:openapi`.
 */
import { writeFileSync } from 'node:fs';
import { generateOpenApiDocument } from './document.ts';

const out = process.argv[2];
const text = `${JSON.stringify(await generateOpenApiDocument())}\n`;
if (out) writeFileSync(out, text);
else process.stdout.write(text);
// Handler modules may hold clients with open sockets or timers: the document is all this process is for.
process.exit(0);
