import { randomBytes } from 'node:crypto';
import { PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { threadIndexPk } from '#shared/db/message';
import { type RoomSummaryItem, roomSummaryKey } from '#shared/db/room-summary';
import { type ApiOptions, api, runtime } from '../api';
import { raw, table } from '../raw-table';

/**
 * AI inputs for the suites that exercise the AI routes on the shared runtime (whose `AI_BASE_URL`
 * answers every completion): agent handles and disposition codes of the real alphabets, agents and
 * threads made through the API, and room summaries as the summarizer writes them (the shared
 * runtime summarizes a room only after `ROOM_SUMMARY_MIN_MESSAGES` messages and an hour, so suites
 * that read summaries seed one).
 */

type Auth = Pick<ApiOptions, 'token' | 'apiKey'>;

/** A fresh agent handle (`/^[a-z][a-z0-9-]{1,31}$/`), new on every call. */
export const agentHandle = (prefix = 'bot') => `${prefix}-${randomBytes(5).toString('hex')}`;

/** A fresh project disposition code (`/^[a-z][a-z0-9_]{1,39}$/`), never one of the defaults. */
export const dispositionCode = (prefix = 'code') => `${prefix}_${randomBytes(5).toString('hex')}`;

/** A valid `POST /agents` body with a fresh handle. */
export const agentBody = (fields: Record<string, unknown> = {}) => ({
  handle: agentHandle(),
  name: 'Helper',
  instructions: 'Answer in one short sentence.',
  ...fields,
});

/** Creates an agent (201 expected) and returns it. */
export async function createAgent(auth: Auth, fields: Record<string, unknown> = {}) {
  const created = await api('/agents', { ...auth, body: agentBody(fields) });
  if (created.status !== 201) throw new Error(`agent creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body as { id: string; handle: string; userId: string; name: string; instructions: string; model: string | null };
}

/** The operator's header, for `PUT /platform/projects/{projectId}/ai-quota`. */
export const operatorHeaders = () => ({ 'x-service-operator-key': runtime().operatorKey });

/** Sets (or with `null` clears) a project's own monthly AI quota; only for projects the suite made itself. */
export async function setAiQuota(projectId: string, monthlyInvocations: number | null) {
  const set = await api(`/platform/projects/${projectId}/ai-quota`, {
    method: 'PUT',
    headers: operatorHeaders(),
    body: { monthlyInvocations },
  });
  if (set.status !== 200) throw new Error(`setting the AI quota failed: ${set.status} ${JSON.stringify(set.body)}`);
  return set.body as { month: string; used: number; quota: number; remaining: number };
}

/** Waits until `count` replies of the thread are on its gsi1 partition (the index is eventually consistent). */
export async function threadIndexed(projectId: string, roomId: string, rootId: number, count: number, timeoutMs = 15_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { Items = [] } = await raw.send(
      new QueryCommand({
        TableName: table(),
        IndexName: 'gsi1',
        KeyConditionExpression: 'gsi1pk = :thread',
        ExpressionAttributeValues: { ':thread': threadIndexPk(projectId, roomId, rootId) },
      }),
    );
    if (Items.length >= count) return;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${count} replies of thread ${rootId} to be indexed`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * A thread a summary accepts: a root and `replies` replies to it (3 messages with the default),
 * posted by `author` (a member of the room), returned once the replies are indexed, so the first
 * summary request already answers 200 and spends no rate-limit budget on polling.
 */
export async function postThread(projectId: string, author: Auth, roomId: string, replies = 2) {
  const post = async (content: string, parentId?: number) => {
    const sent = await api('/messages', { ...author, body: { roomId, content, ...(parentId ? { parent_id: parentId } : {}) } });
    if (sent.status !== 201) throw new Error(`posting failed: ${sent.status} ${JSON.stringify(sent.body)}`);
    return sent.body.id as number;
  };
  const rootId = await post('Should we ship on Friday?');
  const replyIds: number[] = [];
  for (let index = 0; index < replies; index++) replyIds.push(await post(`Reply ${index + 1}: yes, QA is done`, rootId));
  await threadIndexed(projectId, roomId, rootId, replies);
  return { rootId, replyIds };
}

/** A room summary as the `RoomSummarizer` stores one; returns it as `GET /rooms/{roomId}/summaries` lists it. */
export async function seedRoomSummary(projectId: string, roomId: string, fields: Partial<RoomSummaryItem> = {}) {
  const createdAt = new Date().toISOString();
  const item: RoomSummaryItem = {
    summaryId: `sum_${randomBytes(11).toString('hex')}`,
    roomId,
    summary: '- the room talked about shipping\n- nothing is open',
    messageCount: 3,
    fromMessageId: 1,
    toMessageId: 3,
    model: 'seeded-model',
    createdAt,
    ...fields,
  };
  await raw.send(
    new PutCommand({ TableName: table(), Item: { ...roomSummaryKey(projectId, roomId, item.createdAt, item.summaryId), ...item } }),
  );
  const { model: _model, ...listed } = item;
  return listed;
}
