import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { dispositionsKey } from '#shared/db/ai';
import { db, tableName } from '#shared/db/client';
import { BadRequestError } from '#shared/errors';
import * as z from '#shared/schema';

/**
 * Disposition codes: what a human agent records when completing a handoff
 * (`PATCH /rooms/{roomId}/handoff`). Every project has the defaults; an admin adds the project's own
 * (`PUT /admin/agent-queue/dispositions`), kept in one item beside the project.
 */

export const DISPOSITION_CODE_PATTERN = /^[a-z][a-z0-9_]{1,39}$/;
export const MAX_DISPOSITION_LABEL_LENGTH = 80;
export const MAX_PROJECT_DISPOSITIONS = 50;

/** The codes every project has; a project may not redefine them. */
export const DEFAULT_DISPOSITIONS: readonly { readonly code: string; readonly label: string }[] = [
  { code: 'resolved', label: 'Resolved' },
  { code: 'escalated', label: 'Escalated' },
  { code: 'follow_up', label: 'Follow-up needed' },
  { code: 'no_response', label: 'No response' },
  { code: 'spam', label: 'Spam' },
];
const defaultCodes = new Set(DEFAULT_DISPOSITIONS.map((entry) => entry.code));
export const isDefaultDisposition = (code: string): boolean => defaultCodes.has(code);

export const dispositionsItem = z.object({
  pk: z.string(),
  sk: z.string(),
  dispositions: z.array(z.object({ code: z.string(), label: z.string() })),
  updatedAt: z.string(),
  updatedBy: z.string(),
});
export type DispositionsItem = z.infer<typeof dispositionsItem>;

export interface Disposition {
  readonly code: string;
  readonly label: string;
  /** One of {@link DEFAULT_DISPOSITIONS}, not the project's own. */
  readonly builtIn: boolean;
}

async function projectDispositions(projectId: string): Promise<DispositionsItem['dispositions']> {
  const { Item } = await db.send(new GetCommand({ TableName: tableName, Key: dispositionsKey(projectId), ConsistentRead: true }));
  return Item ? dispositionsItem.parse(Item).dispositions : [];
}

const withDefaults = (own: DispositionsItem['dispositions']): Disposition[] => [
  ...DEFAULT_DISPOSITIONS.map((entry) => ({ ...entry, builtIn: true })),
  ...own.map((entry) => ({ code: entry.code, label: entry.label, builtIn: false })),
];

/** The defaults, then the project's own codes in the order the admin gave them. */
export async function listDispositions(projectId: string): Promise<Disposition[]> {
  return withDefaults(await projectDispositions(projectId));
}

/**
 * Replaces the project's own codes (the handler's schema checked the codes' shape, their
 * uniqueness and that none is a default); answers the whole list as `GET` does.
 */
export async function setDispositions(
  projectId: string,
  own: readonly { code: string; label: string }[],
  updatedBy: string,
): Promise<Disposition[]> {
  const item: DispositionsItem = {
    ...dispositionsKey(projectId),
    dispositions: own.map(({ code, label }) => ({ code, label })),
    updatedAt: new Date().toISOString(),
    updatedBy,
  };
  await db.send(new PutCommand({ TableName: tableName, Item: item }));
  return withDefaults(item.dispositions);
}

/** `400 unknown_disposition`, naming the codes the project accepts, unless `code` is one of `dispositions`. */
export function requireKnownDisposition(dispositions: readonly Disposition[], code: string): Disposition {
  const known = dispositions.find((entry) => entry.code === code);
  if (known) return known;
  const codes = dispositions.map((entry) => entry.code);
  throw new BadRequestError(
    `Unknown disposition code ${JSON.stringify(code)}; this project accepts: ${codes.join(', ')}`,
    { allowed: codes },
    'unknown_disposition',
  );
}
