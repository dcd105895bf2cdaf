import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { ERASED_USER_ID } from '#shared/ids';
import { currentTraceId } from '#shared/request-context';
import * as z from '#shared/schema';
import { getAll } from './batch';
import { db, tableName } from './client';
import { MESSAGE_ID_DIGITS, MESSAGE_SK_PREFIX, messageSk, roomMessagesPk, userPk } from './keys';
import { putIfAbsent } from './put-if-absent';
import { cancellationReasons, isConditionFailure, isTransactionConflict, type TransactPart, transactWrite } from './transact';

export const moderationLabel = z.object({
  label: z.literal('auto_flag'),
  reason: z.string(),
});

/** What a voice message carries beside its audio attachment; the transcript arrives later (`transcriptStatus`). */
export const VOICE_TRANSCRIPT_STATUSES = ['none', 'pending', 'done', 'failed'] as const;
export const voiceFields = z.object({
  durationMs: z.number().check(z.int()),
  transcript: z.nullable(z.string()),
  transcriptStatus: z.enum(VOICE_TRANSCRIPT_STATUSES),
});
export type VoiceFields = z.infer<typeof voiceFields>;

/**
 * A message, in its room's message partition, sorted by id. Ids are derived from `createdAt`
 * (milliseconds × 1000 + a sub-millisecond suffix), so id order is history order and a backdated
 * import lands in its place without a second index (docs/data-model.md).
 */
export const messageItem = z.object({
  pk: z.string(),
  sk: z.string(),
  projectId: z.string(),
  roomId: z.string(),
  id: z.number().check(z.int()),
  userId: z.string(),
  content: z.string(),
  parent_id: z.nullable(z.number().check(z.int())),
  attachments: z.array(z.string()),
  clientMessageId: z.nullable(z.string()),
  createdAt: z.string(),
  moderation: z.nullable(moderationLabel),
  /** Replies only: the thread's root message, the reply's depth below it and its ancestors (see {@link threadPlacement}). */
  thread_root: z.optional(z.number().check(z.int())),
  thread_depth: z.optional(z.number().check(z.int())),
  thread_path: z.optional(z.string()),
  /** Set on a tombstone: when the author's erasure removed the content (docs/api.md, "GDPR"). */
  erasedAt: z.optional(z.string()),
  /** The last edit's time and how many edits the message had (its previous versions). */
  editedAt: z.optional(z.string()),
  editCount: z.optional(z.number().check(z.int())),
  /** Set on a tombstone left by `DELETE /messages/{id}`: content and attachments are gone, replies keep their parent. */
  deletedAt: z.optional(z.string()),
  deletedBy: z.optional(z.string()),
  /**
   * Reaction counts by emoji, recounted from the reaction items by the reaction counter (never
   * written by a reaction request), and the time its last recount began (see `./reaction`).
   */
  reactions: z.optional(z.record(z.string(), z.number().check(z.int()))),
  reactionsCountedAt: z.optional(z.number()),
  pinnedAt: z.optional(z.string()),
  pinnedBy: z.optional(z.string()),
  /** Voice messages only (`POST /messages/voice`). */
  voice: z.optional(voiceFields),
  /** Set when the room had a bridge as the message was sent: its `message.created` is for the bridge relay. */
  bridged: z.optional(z.literal(true)),
  /** The bridge a bridged platform's message came in through, which the relay does not send it back to. */
  viaBridge: z.optional(z.string()),
  /**
   * Copied from the room item as the send read it (`roomFlagsOf` of `#domain/events/message-attributes`):
   * the room is a dm, has had push targets, has had watchers. The publisher turns them into the
   * filter attributes that wake the notification, push and watcher subscribers only when needed.
   */
  dm: z.optional(z.literal(true)),
  pushTargets: z.optional(z.literal(true)),
  watched: z.optional(z.literal(true)),
  /**
   * `coalesced`: the room was hot as it was sent, so the sender did not broadcast it; the
   * `RoomDelivery` stream consumer posts it, batched (docs/architecture.md, "Hot rooms").
   */
  delivery: z.optional(z.literal('coalesced')),
  /** A coalesced message's WebSocket sender, which has the `ack` and is left out of its delivery. */
  senderConnectionId: z.optional(z.string()),
  /**
   * The trace id of the request that sent it: the item is the outbox of its `message.created`, so
   * the publisher hands the id on with the events (docs/operations.md, "Trace ids"). Never shown.
   */
  traceId: z.optional(z.string()),
});
export type MessageItem = z.infer<typeof messageItem>;

/**
 * Where a reply sits in its thread, from its parent: a thread summary needs the thread
 * breadth-first from the root, and a reply list the children of one message, each in one Query.
 * Replies carry a gsi1 key in their thread's partition whose sort key is the depth, then the ids
 * of the ancestors below the root, then the reply's own id, all fixed width: sorted, that is
 * breadth-first order (a level after the one above it, children in their parents' order, siblings
 * by id), and the children of one message share a prefix. Ids are 16 digits, so a path fits the
 * 1 KB sort key up to depth {@link MAX_INDEXED_DEPTH}; deeper replies sort after every indexed one,
 * which is where breadth-first order puts them in any thread a summary reads (at most 40 messages).
 */
export interface ThreadPlacement {
  readonly root: number;
  readonly depth: number;
  /** The ancestors between the root and the reply, root first, as sort-key segments. */
  readonly path: string;
}
export const MAX_INDEXED_DEPTH = 39;
const idSegment = (id: number) => String(id).padStart(MESSAGE_ID_DIGITS, '0');

export function threadPlacement(parent: MessageItem): ThreadPlacement {
  if (parent.thread_root === undefined) return { root: parent.id, depth: 1, path: '' };
  const depth = (parent.thread_depth ?? 1) + 1;
  // Past the indexed depth the path is not part of the key: it stops growing, so a chain of
  // replies however long keeps its items small.
  if (depth > MAX_INDEXED_DEPTH) return { root: parent.thread_root, depth, path: '' };
  return { root: parent.thread_root, depth, path: [parent.thread_path, idSegment(parent.id)].filter(Boolean).join('#') };
}

export const threadIndexPk = (projectId: string, roomId: string, rootId: number) => `${roomMessagesPk(projectId, roomId)}#THREAD#${rootId}`;

export function threadIndexSk(placement: ThreadPlacement, id: number): string {
  if (placement.depth > MAX_INDEXED_DEPTH) return `~#${idSegment(id)}`;
  return [String(placement.depth).padStart(2, '0'), placement.path, idSegment(id)].filter(Boolean).join('#');
}

export const messageKey = (projectId: string, roomId: string, messageId: number) => ({
  pk: roomMessagesPk(projectId, roomId),
  sk: messageSk(messageId),
});

/**
 * Guards `clientMessageId` uniqueness within a room. Written in one transaction with the message, so
 * a retry finds the id and time the first attempt chose and the message under it (a guard without
 * its message is one an earlier release wrote before the message and never finished).
 */
export const clientMessageGuardKey = (projectId: string, roomId: string, clientMessageId: string) => ({
  pk: roomMessagesPk(projectId, roomId),
  sk: `CMID#${clientMessageId}`,
});

/** What a `clientMessageId` guard holds: the id and time its first use chose. */
export interface ClientMessageReservation {
  readonly id: number;
  readonly createdAt: string;
}

/** The message with this id, `undefined` when there is none; an eventually consistent read unless `consistent: true`. */
export async function findMessage(
  projectId: string,
  roomId: string,
  messageId: number,
  options: { consistent?: boolean } = {},
): Promise<MessageItem | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: messageKey(projectId, roomId, messageId), ConsistentRead: options.consistent }),
  );
  return Item ? messageItem.parse(Item) : undefined;
}

/** The author index (gsi2): a user's messages across rooms, in id (time) order. */
export const authoredMessagesPk = (projectId: string, userId: string) => `${userPk(projectId, userId)}#AUTHORED`;
const authoredMessageSk = (roomId: string, messageId: number) => `${messageSk(messageId)}#${roomId}`;

/** The item a new message is stored as: a reply's gsi1 keys, its author index keys and the request's trace id. */
function newMessageRecord(item: MessageItem): Record<string, unknown> {
  const threadKeys =
    item.thread_root === undefined
      ? {}
      : {
          gsi1pk: threadIndexPk(item.projectId, item.roomId, item.thread_root),
          gsi1sk: threadIndexSk({ root: item.thread_root, depth: item.thread_depth ?? 1, path: item.thread_path ?? '' }, item.id),
        };
  const traceId = item.traceId ?? currentTraceId();
  return {
    ...item,
    ...(traceId ? { traceId } : {}),
    ...threadKeys,
    gsi2pk: authoredMessagesPk(item.projectId, item.userId),
    gsi2sk: authoredMessageSk(item.roomId, item.id),
  };
}

/**
 * Stores a new message, conditional on its id being free so no message ever overwrites another:
 * `false` when the id is taken. A reply is also filed in its thread's partition of gsi1
 * (breadth-first order, replies by parent), and every message under its author in gsi2, in the
 * same put, so the index costs the send no request (only the index's write).
 */
export async function putNewMessage(item: MessageItem): Promise<boolean> {
  return putIfAbsent(newMessageRecord(item));
}

/** What refused a new message's transaction ({@link writeNewMessage}), part by part; `undefined` when it was written. */
export interface NewMessageRefusal {
  /** The `clientMessageId` was used before: the id and time its first use chose. */
  readonly guard?: ClientMessageReservation;
  /** The parent asserted to be a thread root is not one: `missing`, or the reply it is. */
  readonly parent?: 'missing' | MessageItem;
  /** Another message holds the id. */
  readonly idTaken: boolean;
}

/**
 * Stores a new message with, in the same request, what it must not go without: its
 * `clientMessageId` guard (`guarded`; absent, holding the message's id and time) and, for a reply
 * whose parent is taken for a thread root (`rootParentId`, the placement the item carries), a check
 * that the parent exists and is no reply itself. Either makes it one TransactWriteItems (each item
 * billed twice); with neither it is {@link putNewMessage}'s single conditional put. The guard and the
 * parent check return the item they found, so a refusal answers without a read.
 */
export async function writeNewMessage(
  item: MessageItem,
  options: { guarded: boolean; rootParentId?: number },
): Promise<NewMessageRefusal | undefined> {
  const { projectId, roomId } = item;
  if (!options.guarded && options.rootParentId === undefined) return (await putNewMessage(item)) ? undefined : { idTaken: true };
  const guardPart =
    options.guarded && item.clientMessageId !== null
      ? clientMessageGuardPart(projectId, roomId, item.clientMessageId, { id: item.id, createdAt: item.createdAt })
      : undefined;
  const parentPart = options.rootParentId === undefined ? undefined : threadRootCheckPart(projectId, roomId, options.rootParentId);
  const parts = [guardPart, parentPart].filter((part) => part !== undefined);
  try {
    await transactWrite(
      [...parts, { Put: { TableName: tableName, Item: newMessageRecord(item), ConditionExpression: 'attribute_not_exists(pk)' } }],
      // Every reply to a busy thread's root checks the root, and DynamoDB cancels transactions that
      // meet on an item: rather than wait such a crowd out, the parent is read (a read never
      // conflicts) and the next write carries its placement without the check.
      parentPart ? { conflictAttempts: 1 } : {},
    );
    return undefined;
  } catch (error) {
    if (parentPart && options.rootParentId !== undefined && isTransactionConflict(error)) {
      const parent = await findMessage(projectId, roomId, options.rootParentId, { consistent: true });
      return { parent: parent ?? 'missing', idTaken: false };
    }
    if (!isConditionFailure(error)) throw error;
    const reasons = cancellationReasons(error);
    const failed = (part: TransactPart | undefined) => {
      const reason = part ? reasons[parts.indexOf(part)] : undefined;
      return reason?.code === 'ConditionalCheckFailed' ? reason : undefined;
    };
    const guard = failed(guardPart);
    const parent = failed(parentPart);
    return {
      ...(guard ? { guard: { id: Number(guard.item?.messageId), createdAt: String(guard.item?.createdAt) } } : {}),
      ...(parent ? { parent: parent.item ? messageItem.parse(parent.item) : ('missing' as const) } : {}),
      idTaken: reasons[parts.length]?.code === 'ConditionalCheckFailed',
    };
  }
}

/** The `clientMessageId` guard, absent, as a transaction part; a collision returns the guard there. */
const clientMessageGuardPart = (
  projectId: string,
  roomId: string,
  clientMessageId: string,
  reservation: ClientMessageReservation,
): TransactPart => ({
  Put: {
    TableName: tableName,
    Item: { ...clientMessageGuardKey(projectId, roomId, clientMessageId), messageId: reservation.id, createdAt: reservation.createdAt },
    ConditionExpression: 'attribute_not_exists(pk)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});

/**
 * A reply's parent exists and is a thread root, as a transaction part: a failure returns the parent
 * when there is one (a reply, whose placement the reply then takes) and nothing when it is missing.
 */
const threadRootCheckPart = (projectId: string, roomId: string, parentId: number): TransactPart => ({
  ConditionCheck: {
    TableName: tableName,
    Key: messageKey(projectId, roomId, parentId),
    ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(thread_root)',
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});

/**
 * One page (up to `limit`) of the messages `userId` wrote in the project, oldest first, from the
 * author index; `cursor` is the page's last key, to pass back for the next. Tombstones are no
 * longer indexed, so an erasure that pages from the start again finds only what it has not erased.
 */
export async function authoredMessagesPage(
  projectId: string,
  userId: string,
  options: { limit: number; cursor?: Record<string, unknown> },
): Promise<{ items: MessageItem[]; cursor?: Record<string, unknown> }> {
  const { Items = [], LastEvaluatedKey } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi2',
      KeyConditionExpression: 'gsi2pk = :author',
      ExpressionAttributeValues: { ':author': authoredMessagesPk(projectId, userId) },
      Limit: options.limit,
      ExclusiveStartKey: options.cursor,
    }),
  );
  return { items: Items.map((raw) => messageItem.parse(raw)), cursor: LastEvaluatedKey };
}

/**
 * Turns the message into a tombstone: content, attachments and clientMessageId go, the author
 * becomes {@link ERASED_USER_ID}, and it leaves the author index; id, room, parent, thread place,
 * time and moderation label stay, so replies keep their parent and history its order. Conditional
 * on the message still being the author's, so a repeat (an erasure resumed) changes nothing:
 * `false` then.
 */
export async function eraseMessageContent(projectId: string, roomId: string, messageId: number, authorId: string): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: messageKey(projectId, roomId, messageId),
        UpdateExpression:
          'SET content = :empty, attachments = :none, userId = :erased, clientMessageId = :null, erasedAt = :now REMOVE gsi2pk, gsi2sk, voice',
        ConditionExpression: 'userId = :author',
        ExpressionAttributeValues: {
          ':empty': '',
          ':none': [],
          ':erased': ERASED_USER_ID,
          ':null': null,
          ':now': new Date().toISOString(),
          ':author': authorId,
        },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** The reservation of `clientMessageId` in its room (strongly consistent), `undefined` when it was never used. */
export async function findClientMessageReservation(
  projectId: string,
  roomId: string,
  clientMessageId: string,
): Promise<ClientMessageReservation | undefined> {
  const { Item } = await db.send(
    new GetCommand({ TableName: tableName, Key: clientMessageGuardKey(projectId, roomId, clientMessageId), ConsistentRead: true }),
  );
  return Item ? { id: Number(Item.messageId), createdAt: String(Item.createdAt) } : undefined;
}

const FIRST_MESSAGE_SK = `${MESSAGE_SK_PREFIX}${'0'.repeat(MESSAGE_ID_DIGITS)}`;
const LAST_MESSAGE_SK = `${MESSAGE_SK_PREFIX}${'9'.repeat(MESSAGE_ID_DIGITS)}`;

/**
 * Up to `limit` messages of a room with ids after `after` and before `before` (both exclusive,
 * either open), in one Query of the room's message partition, whose sort key is the id (and so the
 * time): oldest first when `oldestFirst`, else newest first.
 */
export async function roomMessagesBetween(
  projectId: string,
  roomId: string,
  range: { after?: number; before?: number; oldestFirst: boolean; limit: number; consistent?: boolean },
): Promise<MessageItem[]> {
  const from = range.after !== undefined ? messageSk(range.after + 1) : FIRST_MESSAGE_SK;
  const to = range.before !== undefined ? messageSk(Math.max(range.before - 1, 0)) : LAST_MESSAGE_SK;
  if (from > to) return [];
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      KeyConditionExpression: 'pk = :pk AND sk BETWEEN :from AND :to',
      ExpressionAttributeValues: { ':pk': roomMessagesPk(projectId, roomId), ':from': from, ':to': to },
      ScanIndexForward: range.oldestFirst,
      Limit: range.limit,
      ConsistentRead: range.consistent,
    }),
  );
  return Items.map((raw) => messageItem.parse(raw));
}

/**
 * Up to `limit` replies of the thread under `rootId`, breadth-first (one Query of the thread's gsi1
 * partition, see {@link threadIndexSk}).
 */
export async function threadReplies(projectId: string, roomId: string, rootId: number, limit: number): Promise<MessageItem[]> {
  const { Items = [] } = await db.send(
    new QueryCommand({
      TableName: tableName,
      IndexName: 'gsi1',
      KeyConditionExpression: 'gsi1pk = :thread',
      ExpressionAttributeValues: { ':thread': threadIndexPk(projectId, roomId, rootId) },
      Limit: limit,
    }),
  );
  return Items.map((raw) => messageItem.parse(raw));
}

/**
 * Writes a voice message's transcript (or its failure, `transcript: null`), once: conditional on the
 * transcript still pending, so a repeated job, or a message erased meanwhile (its voice fields
 * gone), fails the condition and writes nothing. One part of the transaction with its event.
 */
export const setVoiceTranscriptPart = (projectId: string, roomId: string, messageId: number, transcript: string | null) =>
  ({
    Update: {
      TableName: tableName,
      Key: messageKey(projectId, roomId, messageId),
      UpdateExpression: 'SET voice.transcript = :transcript, voice.transcriptStatus = :status',
      ConditionExpression: 'voice.transcriptStatus = :pending',
      ExpressionAttributeValues: {
        ':transcript': transcript,
        ':status': transcript === null ? 'failed' : 'done',
        ':pending': 'pending',
      },
    },
  }) satisfies TransactPart;

export function toMessage(item: MessageItem) {
  return {
    id: item.id,
    roomId: item.roomId,
    userId: item.userId,
    content: item.content,
    parent_id: item.parent_id,
    attachments: item.attachments,
    clientMessageId: item.clientMessageId,
    createdAt: item.createdAt,
    moderation: item.moderation,
    editedAt: item.editedAt ?? null,
    editCount: item.editCount ?? 0,
    deletedAt: item.deletedAt ?? null,
    reactions: item.reactions ?? {},
    pinned: item.pinnedAt !== undefined,
    ...(item.voice ? { voice: item.voice } : {}),
  };
}

/** What an edit writes: the new content, its moderation label and when. */
export interface MessageEdit {
  readonly content: string;
  readonly moderation: z.infer<typeof moderationLabel> | null;
  readonly editedAt: string;
}

/**
 * The edit of a message, as a transaction part: only over the version read (`previousEditCount`),
 * by its author, and never on a tombstone, so the edit count the caller announces is the one stored.
 */
export const editMessagePart = (item: MessageItem, edit: MessageEdit): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: messageKey(item.projectId, item.roomId, item.id),
    UpdateExpression: 'SET content = :content, moderation = :moderation, editedAt = :at, editCount = :count',
    ConditionExpression:
      item.editCount === undefined
        ? 'userId = :author AND attribute_not_exists(deletedAt) AND attribute_not_exists(editCount)'
        : 'userId = :author AND attribute_not_exists(deletedAt) AND editCount = :previous',
    ExpressionAttributeValues: {
      ':content': edit.content,
      ':moderation': edit.moderation,
      ':at': edit.editedAt,
      ':count': (item.editCount ?? 0) + 1,
      ':author': item.userId,
      ...(item.editCount === undefined ? {} : { ':previous': item.editCount }),
    },
  },
});

/**
 * Turns the message into a deletion tombstone, as a transaction part: content, attachments and the
 * pin go, id, author, parent and thread place stay (replies keep their parent). Conditional on the
 * message existing and not being a tombstone already.
 */
export const tombstoneMessagePart = (
  projectId: string,
  roomId: string,
  messageId: number,
  deletedAt: string,
  deletedBy: string,
): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: messageKey(projectId, roomId, messageId),
    UpdateExpression: 'SET content = :empty, attachments = :none, deletedAt = :at, deletedBy = :by REMOVE pinnedAt, pinnedBy',
    ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt)',
    ExpressionAttributeValues: { ':empty': '', ':none': [], ':at': deletedAt, ':by': deletedBy },
  },
});

/** Marks the message pinned, as a transaction part: only a live message that is not pinned yet. */
export const pinMessagePart = (projectId: string, roomId: string, messageId: number, pinnedAt: string, pinnedBy: string): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: messageKey(projectId, roomId, messageId),
    UpdateExpression: 'SET pinnedAt = :at, pinnedBy = :by',
    ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(deletedAt) AND attribute_not_exists(pinnedAt)',
    ExpressionAttributeValues: { ':at': pinnedAt, ':by': pinnedBy },
  },
});

/** Clears the pin, as a transaction part: only a pinned message. */
export const unpinMessagePart = (projectId: string, roomId: string, messageId: number): TransactPart => ({
  Update: {
    TableName: tableName,
    Key: messageKey(projectId, roomId, messageId),
    UpdateExpression: 'REMOVE pinnedAt, pinnedBy',
    ConditionExpression: 'attribute_exists(pinnedAt)',
  },
});

/**
 * Stores a recount of the message's reactions, unless a recount that began later stored its own
 * first (two counters may recount one message at once): `false` then, or when the message is gone.
 */
export async function storeReactionCounts(
  projectId: string,
  roomId: string,
  messageId: number,
  counts: Record<string, number>,
  countedAt: number,
): Promise<boolean> {
  try {
    await db.send(
      new UpdateCommand({
        TableName: tableName,
        Key: messageKey(projectId, roomId, messageId),
        UpdateExpression: 'SET reactions = :counts, reactionsCountedAt = :at',
        ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(reactionsCountedAt) OR reactionsCountedAt < :at)',
        ExpressionAttributeValues: { ':counts': counts, ':at': countedAt },
      }),
    );
    return true;
  } catch (error) {
    if (isConditionFailure(error)) return false;
    throw error;
  }
}

/** Messages by id in one room (BatchGet), in no particular order; ids without a message are left out. */
export async function findMessages(projectId: string, roomId: string, messageIds: readonly number[]): Promise<MessageItem[]> {
  return (await getAll(messageIds.map((id) => messageKey(projectId, roomId, id)))).map((raw) => messageItem.parse(raw));
}
export type Message = ReturnType<typeof toMessage>;
