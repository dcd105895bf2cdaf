import { askAi, bulletLines, conversation, refuseE2eRoom, requireAi } from '#domain/ai/assistant';
import { accessRoom } from '#domain/rooms/rooms';
import type { Principal } from '#shared/auth';
import { findMessage, type MessageItem, threadReplies } from '#shared/db/message';
import { BadRequestError, MessageNotFoundError } from '#shared/errors';

/** The spec's bounds: fewer than 3 messages is no thread; at most 40 are read, breadth-first from the root. */
export const THREAD_MIN_MESSAGES = 3;
export const THREAD_MAX_MESSAGES = 40;
/** Parents walked to find a root for a reply stored without its thread placement. */
const MAX_PARENT_WALK = 50;

export interface ThreadSummary {
  readonly summary: string;
  readonly rootMessageId: number;
  readonly messageCount: number;
  readonly truncated: boolean;
}

/** A reply knows its root; one stored without that (none do today) is walked up to it. */
async function rootOf(message: MessageItem): Promise<MessageItem> {
  if (message.parent_id === null) return message;
  if (message.thread_root !== undefined) {
    const root = await findMessage(message.projectId, message.roomId, message.thread_root);
    if (root) return root;
  }
  let current = message;
  for (let step = 0; step < MAX_PARENT_WALK && current.parent_id !== null; step++) {
    const parent = await findMessage(current.projectId, current.roomId, current.parent_id);
    if (!parent) break;
    current = parent;
  }
  return current;
}

/**
 * The thread of `messageId`: its root, then up to 39 replies breadth-first (one Query of the
 * thread's gsi1 partition, whose sort keys are breadth-first order), `truncated` when more exist.
 * A reply names its root, so the root and the Query go out together: 3 requests.
 */
export async function collectThread(projectId: string, roomId: string, messageId: number) {
  const message = await findMessage(projectId, roomId, messageId);
  if (!message) throw new MessageNotFoundError();
  const known = message.thread_root ?? (message.parent_id === null ? message.id : undefined);
  const repliesOf = (rootId: number) => threadReplies(projectId, roomId, rootId, THREAD_MAX_MESSAGES);
  // A reply stored without its placement is walked up first, and its thread read from the root found.
  const [root, replies] =
    known === undefined
      ? await rootOf(message).then(async (found) => [found, await repliesOf(found.id)] as const)
      : await Promise.all([rootOf(message), repliesOf(known)]);
  const truncated = replies.length >= THREAD_MAX_MESSAGES;
  return { root, messages: [root, ...replies.slice(0, THREAD_MAX_MESSAGES - 1)], truncated };
}

/**
 * `POST /messages/{messageId}/summary`: members of the room; bullet lines from the AI provider. A
 * summary helps the humans of a room, so a handoff does not block it (only AI answers in the room).
 */
export async function summarizeThread(principal: Principal, roomId: string, messageId: number): Promise<ThreadSummary> {
  requireAi();
  const { room } = await accessRoom(principal, roomId, { join: false });
  refuseE2eRoom(room);
  const { root, messages, truncated } = await collectThread(principal.projectId, roomId, messageId);
  if (messages.length < THREAD_MIN_MESSAGES) {
    throw new BadRequestError(
      `A thread needs at least ${THREAD_MIN_MESSAGES} messages to summarize; this one has ${messages.length}`,
      undefined,
      'thread_too_short',
    );
  }
  const answer = await askAi(principal.projectId, 'thread_summary', [
    {
      role: 'system',
      content:
        'You summarize chat threads. Answer with 2 to 6 short bullet lines starting with "- ": the question or topic, ' +
        'decisions, open points. Use only what the messages say.',
    },
    // Root first: a thread too long for the prompt loses its last replies, never its question.
    { role: 'user', content: `Thread (root first, replies breadth-first):\n${conversation(messages, 'first')}` },
  ]);
  return { summary: bulletLines(answer.content), rootMessageId: root.id, messageCount: messages.length, truncated };
}
