import { readDoc } from './docs.ts';

/**
 * The first-deploy checklist as docs/operations.md ("First deploy: a checklist") and the README
 * ("Deploy") write it, read by the tests that follow it, so that the documents and CI cannot drift:
 * what the documents tell a newcomer to type is what the tests run.
 */

/** The text of a markdown section: from its heading line to the next heading of the same level or above. */
export function markdownSection(markdown: string, heading: string): string {
  const lines = markdown.split('\n');
  const start = lines.findIndex((line) => line.trim() === heading);
  if (start < 0) throw new Error(`No section "${heading}"`);
  const level = heading.indexOf(' ');
  const end = lines.findIndex((line, index) => index > start && /^#+ /.test(line) && line.indexOf(' ') <= level);
  return lines.slice(start + 1, end < 0 ? undefined : end).join('\n');
}

/** The fenced `bash` blocks of a markdown text, unindented (a block inside a list item is indented like it). */
export function bashBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^( *)```bash\n([\s\S]*?)^ *```$/gm)].map(([, indent = '', body = '']) =>
    body
      .split('\n')
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n')
      .trimEnd(),
  );
}

/** A command with its continuation lines (ending in `\`) joined into one line. */
export const oneLine = (command: string) => command.replace(/\\\n\s*/g, ' ').trim();

export interface DeployChecklist {
  /** The whole checklist section of docs/operations.md. */
  readonly text: string;
  /** The `npx cdk deploy` command of "During", continuation lines joined. */
  readonly deployCommand: string;
  /** Its `-c key=value` pairs. */
  readonly context: Readonly<Record<string, string>>;
  /** The arguments of the offline check (step "Check offline"): the deploy command with `synth --quiet` in place of `deploy --all`. */
  readonly synthArgs: readonly string[];
  /** The `bash` blocks of "After", in order: what a newcomer types once the stack is up. */
  readonly afterBlocks: readonly string[];
  /** The stack outputs "After" reads (`output <Name>`). */
  readonly outputsRead: readonly string[];
}

/** The checklist of docs/operations.md. */
export function deployChecklist(): DeployChecklist {
  const text = markdownSection(readDoc('docs/operations.md'), '### First deploy: a checklist');
  const [, during = '', after = ''] = text.split(/^\*\*(?:During|After)\*\*$/m);
  const deployBlocks = bashBlocks(during).filter((block) => block.startsWith('npx cdk deploy'));
  if (deployBlocks.length !== 1) throw new Error(`"During" must hold exactly one deploy command, found ${deployBlocks.length}`);
  const deployCommand = oneLine(deployBlocks[0] as string);
  const words = deployCommand.split(/\s+/);
  if (words.slice(0, 4).join(' ') !== 'npx cdk deploy --all') throw new Error(`Unexpected deploy command: ${deployCommand}`);
  const options = words.slice(4);
  const context: Record<string, string> = {};
  for (let index = 0; index < options.length; index += 2) {
    const [flag, pair = ''] = [options[index], options[index + 1]];
    const separator = pair.indexOf('=');
    if (flag !== '-c' || separator < 1) throw new Error(`The deploy command may only add -c key=value, found "${flag} ${pair}"`);
    context[pair.slice(0, separator)] = pair.slice(separator + 1);
  }
  const afterBlocks = bashBlocks(after);
  return {
    text,
    deployCommand,
    context,
    synthArgs: ['synth', '--quiet', ...options],
    afterBlocks,
    outputsRead: [...new Set([...afterBlocks.join('\n').matchAll(/\$\(output (\w+)\)/g)].map(([, name]) => name as string))],
  };
}

/** The deploy commands of the README's "Deploy" section, continuation lines joined. */
export function readmeDeployCommands(): string[] {
  return bashBlocks(markdownSection(readDoc('README.md'), '## Deploy'))
    .filter((block) => block.startsWith('npx cdk deploy'))
    .map(oneLine);
}
