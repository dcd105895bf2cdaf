import { type DispositionEntry, projectDispositions, putProjectDispositions } from '#shared/db/dispositions';
import { BadRequestError } from '#shared/errors';

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

export interface Disposition {
  readonly code: string;
  readonly label: string;
  /** One of {@link DEFAULT_DISPOSITIONS}, not the project's own. */
  readonly builtIn: boolean;
}

const withDefaults = (own: readonly DispositionEntry[]): Disposition[] => [
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
  const item = await putProjectDispositions(projectId, own, { updatedAt: new Date().toISOString(), updatedBy });
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
