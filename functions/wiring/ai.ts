import type { Binding } from './bindings.ts';
import { messageWriter } from './messages.ts';
import type { Area, QueueDefinition } from './types.ts';

/** What calls the AI provider: its base URL and key, and the table (quota, context, results). */
const aiCaller: readonly Binding[] = ['table:read', 'table:write', 'outbound:ai', 'secret:ai-key'];
/** An agent answers in the room through the message pipeline, after `agentTyping` frames. */
const agentSpeaker: readonly Binding[] = [...new Set([...messageWriter, ...aiCaller])];

export const roomSummaryQueue: QueueDefinition = {
  id: 'RoomSummary',
  // Six times the summarizer's timeout, as AWS advises for SQS event sources.
  visibilityTimeoutSeconds: 540,
  maxReceiveCount: 3,
  summary: 'Room summary jobs, at most one queued per room at a time',
};

/** AI helpers (thread summaries, reply suggestions, room summaries), in-room agents and human handoff. */
export const ai: Area = {
  id: 'Ai',
  summary: 'Thread and room summaries, reply suggestions, agents, human handoff and the agent queue',
  httpRoutes: [
    {
      id: 'SummarizeThread',
      method: 'POST',
      path: '/messages/{messageId}/summary',
      handler: 'http/ai/summarize-thread.ts',
      auth: 'user',
      // Every route that pays for a model call admits members and above: guests (embed widget, public rooms) are anonymous enough to farm it.
      minRole: 'member',
      rateLimit: { bucket: 'thread-summary', per: 'user', setting: 'RATE_LIMIT_THREAD_SUMMARY_PER_MINUTE' },
      bindings: aiCaller,
      // The AI budget of the route (functions/domain/ai/assistant.ts) fits inside API Gateway's 30 s.
      timeoutSeconds: 29,
      summary: 'Summarize the thread a message belongs to (breadth-first from its root, up to 40 messages)',
    },
    {
      id: 'SuggestReplies',
      method: 'POST',
      path: '/messages/suggest-replies',
      handler: 'http/ai/suggest-replies.ts',
      auth: 'user',
      minRole: 'member',
      flag: 'reply_suggestions',
      rateLimit: { bucket: 'reply-suggestions', per: 'user', setting: 'RATE_LIMIT_REPLY_SUGGESTIONS_PER_MINUTE' },
      bindings: aiCaller,
      // The AI budget of the route (functions/domain/ai/assistant.ts) fits inside API Gateway's 30 s.
      timeoutSeconds: 29,
      summary: 'Up to three suggested replies from the recent messages of a room',
    },
    {
      id: 'ListRoomSummaries',
      method: 'GET',
      path: '/rooms/{roomId}/summaries',
      handler: 'http/ai/list-room-summaries.ts',
      auth: 'userOrService',
      bindings: ['table:read'],
      summary: "The room's automatic summaries, newest first",
    },
    {
      id: 'GetAiUsage',
      method: 'GET',
      path: '/admin/ai/usage',
      handler: 'http/ai/get-usage.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read'],
      summary: "This month's AI calls against the project's monthly quota",
    },
    {
      id: 'SetProjectAiQuota',
      method: 'PUT',
      path: '/platform/projects/{projectId}/ai-quota',
      handler: 'http/platform/set-ai-quota.ts',
      auth: 'operator',
      bindings: ['table:read', 'table:write', 'secret:operator-key'],
      summary: "Set (or clear, with null) a project's own monthly AI quota",
    },
    {
      id: 'CreateAgent',
      method: 'POST',
      path: '/agents',
      handler: 'http/ai/create-agent.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      summary: 'Create an in-room AI agent (name, handle, instructions, model)',
    },
    {
      id: 'ListAgents',
      method: 'GET',
      path: '/agents',
      handler: 'http/ai/list-agents.ts',
      auth: 'userOrService',
      bindings: ['table:read'],
      summary: "The project's agents",
    },
    {
      id: 'UpdateAgent',
      method: 'PATCH',
      path: '/agents/{agentId}',
      handler: 'http/ai/update-agent.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      summary: "Change an agent's name, instructions or model",
    },
    {
      id: 'DeleteAgent',
      method: 'DELETE',
      path: '/agents/{agentId}',
      handler: 'http/ai/delete-agent.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      summary: 'Delete an agent',
    },
    {
      id: 'InvokeAgent',
      method: 'POST',
      path: '/agents/{agentId}/invoke',
      handler: 'http/ai/invoke-agent.ts',
      auth: 'user',
      minRole: 'member',
      // The @mentions of the user's messages spend this budget too (functions/domain/ai/agents.ts).
      rateLimit: { bucket: 'agent-answers', per: 'user', setting: 'RATE_LIMIT_AGENT_INVOKE_PER_MINUTE' },
      bindings: agentSpeaker,
      // The AI budget of the route (functions/domain/ai/assistant.ts) fits inside API Gateway's 30 s.
      timeoutSeconds: 29,
      summary: 'Make an agent answer in a room (409 human_handoff_active during a handoff)',
    },
    {
      id: 'GetRoomHandoff',
      method: 'GET',
      path: '/rooms/{roomId}/handoff',
      handler: 'http/ai/get-handoff.ts',
      auth: 'userOrService',
      bindings: ['table:read'],
      summary: "The room's handoff state (members and above)",
    },
    {
      id: 'StartRoomHandoff',
      method: 'POST',
      path: '/rooms/{roomId}/handoff',
      handler: 'http/ai/start-handoff.ts',
      auth: 'userOrService',
      minRole: 'moderator',
      bindings: [...agentSpeaker],
      // The AI budget of the route (functions/domain/ai/assistant.ts) fits inside API Gateway's 30 s.
      timeoutSeconds: 29,
      summary: 'A human takes over from AI: context summary, an auto-claimed agent task, the handoff frame and event',
    },
    {
      id: 'CompleteRoomHandoff',
      method: 'PATCH',
      path: '/rooms/{roomId}/handoff',
      handler: 'http/ai/complete-handoff.ts',
      auth: 'userOrService',
      minRole: 'moderator',
      bindings: messageWriter,
      summary: 'Complete the handoff with a disposition code; the task is resolved and AI may answer again',
    },
    {
      id: 'ListDispositions',
      method: 'GET',
      path: '/agent-queue/dispositions',
      handler: 'http/ai/list-dispositions.ts',
      auth: 'userOrService',
      bindings: ['table:read'],
      summary: 'The disposition codes a handoff may be completed with (defaults and the project’s own)',
    },
    {
      id: 'SetDispositions',
      method: 'PUT',
      path: '/admin/agent-queue/dispositions',
      handler: 'http/ai/set-dispositions.ts',
      auth: 'userOrService',
      minRole: 'admin',
      bindings: ['table:read', 'table:write'],
      summary: "Replace the project's own disposition codes",
    },
    {
      id: 'ListAgentTasks',
      method: 'GET',
      path: '/agent-queue/tasks',
      handler: 'http/ai/list-agent-tasks.ts',
      auth: 'userOrService',
      minRole: 'moderator',
      bindings: ['table:read'],
      summary: 'Agent tasks by status, newest first',
    },
  ],
  queues: [roomSummaryQueue],
  queueConsumers: [
    {
      id: 'RoomSummarizer',
      queue: 'RoomSummary',
      handler: 'workers/summarize-room.ts',
      batchSize: 1,
      maxConcurrency: 2,
      // Above the room summary's AI budget (60 s).
      timeoutSeconds: 90,
      bindings: aiCaller,
      summary: 'Writes one room summary and announces room.summary',
    },
  ],
  eventSubscribers: [
    {
      id: 'RoomSummaryScheduler',
      eventTypes: ['message.created'],
      handler: 'workers/schedule-room-summaries.ts',
      batchSize: 10,
      maxConcurrency: 2,
      timeoutSeconds: 30,
      // Six times the consumer's timeout, as AWS advises for SQS event sources.
      visibilityTimeoutSeconds: 180,
      maxReceiveCount: 5,
      bindings: ['table:read', 'table:write', 'queue:RoomSummary', 'outbound:ai'],
      summary: 'Counts new messages per room and queues one summary job once the thresholds pass',
    },
    {
      id: 'AgentMentions',
      eventTypes: ['message.created'],
      handler: 'workers/answer-agent-mentions.ts',
      batchSize: 10,
      maxConcurrency: 2,
      // Above an agent's AI budget (24 s) with the answers of a batch running side by side.
      timeoutSeconds: 90,
      visibilityTimeoutSeconds: 540,
      maxReceiveCount: 3,
      bindings: agentSpeaker,
      summary: 'An @mention of an agent makes it answer in the room, unless a human has taken over',
    },
  ],
};
