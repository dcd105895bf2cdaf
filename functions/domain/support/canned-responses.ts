import { actorId, type Principal } from '#shared/auth';
import { type CannedResponse, readCannedResponses, replaceCannedResponses } from '#shared/db/canned-responses';
import { ConflictError, NotFoundError } from '#shared/errors';
import { newId } from '#shared/ids';

/**
 * Canned responses: replies agents paste, each with a title, content, an optional shortcut
 * (unique in the project, compared without case) and tags. All of a project's live in one item
 * (`#shared/db/canned-responses`); a change rewrites it if nobody changed it since it was read,
 * and is tried again from a fresh read otherwise.
 */
export const MAX_CANNED_RESPONSES = 100;
export const MAX_CANNED_TITLE_LENGTH = 120;
export const MAX_CANNED_CONTENT_LENGTH = 2000;
export const MAX_CANNED_TAGS = 10;
export const MAX_CANNED_TAG_LENGTH = 32;
/** A shortcut is typed after `/` in an agent's composer: a word of letters, digits, `_` and `-`. */
export const CANNED_SHORTCUT_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;

/** Of concurrent changes each round lets one through: this many admins changing the list at once all succeed. */
const WRITE_ATTEMPTS = 10;
const RETRY_JITTER_MS = 20;

export interface CannedResponseInput {
  readonly title: string;
  readonly content: string;
  readonly shortcut?: string | null;
  readonly tags?: readonly string[];
}

const notFound = () => new NotFoundError('canned_response_not_found', 'No canned response with this id in the project');
const shortcutTaken = (shortcut: string) =>
  new ConflictError('shortcut_taken', `Another canned response of the project has the shortcut ${shortcut}`);

/** Applies `change` to a fresh read of the list and writes it, again from a fresh read when another change came first. */
async function changeList<T>(
  principal: Principal,
  change: (responses: CannedResponse[], now: string) => { responses: CannedResponse[]; result: T },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    const { responses, version } = await readCannedResponses(principal.projectId, { consistent: true });
    const now = new Date().toISOString();
    const next = change(responses, now);
    if (await replaceCannedResponses(principal.projectId, version, next.responses, { updatedAt: now, updatedBy: actorId(principal) })) {
      return next.result;
    }
    if (attempt >= WRITE_ATTEMPTS)
      throw new ConflictError('canned_responses_changed', 'The canned responses kept changing during the request; try again');
    await new Promise((resolve) => setTimeout(resolve, Math.random() * RETRY_JITTER_MS));
  }
}

function requireFreeShortcut(responses: readonly CannedResponse[], shortcut: string | null | undefined, except?: string): void {
  if (!shortcut) return;
  if (responses.some((response) => response.responseId !== except && response.shortcut === shortcut)) throw shortcutTaken(shortcut);
}

const uniqueTags = (tags: readonly string[] | undefined) => [...new Set(tags ?? [])];

/** `GET /support/canned-responses`: every response, by title. */
export async function listCannedResponses(projectId: string): Promise<{ responses: CannedResponse[] }> {
  const { responses } = await readCannedResponses(projectId);
  return { responses: [...responses].sort((a, b) => a.title.localeCompare(b.title) || a.responseId.localeCompare(b.responseId)) };
}

/** `POST /admin/support/canned-responses`: 409 `shortcut_taken`, 409 `canned_responses_full` past the bound. */
export function createCannedResponse(principal: Principal, input: CannedResponseInput): Promise<CannedResponse> {
  return changeList(principal, (responses, now) => {
    if (responses.length >= MAX_CANNED_RESPONSES) {
      throw new ConflictError('canned_responses_full', `A project has at most ${MAX_CANNED_RESPONSES} canned responses; delete one first`);
    }
    requireFreeShortcut(responses, input.shortcut);
    const response: CannedResponse = {
      responseId: newId('cr'),
      title: input.title,
      content: input.content,
      shortcut: input.shortcut ?? null,
      tags: uniqueTags(input.tags),
      createdAt: now,
      updatedAt: now,
    };
    return { responses: [...responses, response], result: response };
  });
}

/** `PATCH /admin/support/canned-responses/{responseId}`: the fields given change, the others stay. */
export function updateCannedResponse(
  principal: Principal,
  responseId: string,
  patch: Partial<CannedResponseInput>,
): Promise<CannedResponse> {
  return changeList(principal, (responses, now) => {
    const current = responses.find((response) => response.responseId === responseId);
    if (!current) throw notFound();
    requireFreeShortcut(responses, patch.shortcut, responseId);
    const updated: CannedResponse = {
      ...current,
      ...(patch.title === undefined ? {} : { title: patch.title }),
      ...(patch.content === undefined ? {} : { content: patch.content }),
      ...(patch.shortcut === undefined ? {} : { shortcut: patch.shortcut }),
      ...(patch.tags === undefined ? {} : { tags: uniqueTags(patch.tags) }),
      updatedAt: now,
    };
    return { responses: responses.map((response) => (response.responseId === responseId ? updated : response)), result: updated };
  });
}

/** `DELETE /admin/support/canned-responses/{responseId}`. */
export function deleteCannedResponse(principal: Principal, responseId: string): Promise<void> {
  return changeList(principal, (responses) => {
    if (!responses.some((response) => response.responseId === responseId)) throw notFound();
    return { responses: responses.filter((response) => response.responseId !== responseId), result: undefined };
  });
}
