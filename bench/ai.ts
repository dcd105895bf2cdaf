/**
 * AI helpers: the service's own overhead of a thread summary (the model answers at once, so what
 * is timed is the service), the DynamoDB requests a 40-message thread costs, and the largest prompt
 * the service can build. The local OpenAI-compatible server of the tests stands in for the model.
 */
import { bindingVariable } from '#wiring/bindings';
import type { Bench, Context } from './harness';
import { recording } from './instrument';
import { countBy, createProject, latencySummary, sleep } from './util';

const SUMMARIES = 200;
const THREAD_SIZE = 40;
const GOALS = { threadReadRequests: 3 } as const;

async function measure({ service, log }: Context) {
  const { api } = service;
  const { startOpenAiServer } = await import('../test/support/ai/openai-server.ts');
  const { config } = await import('#shared/config');
  const server = await startOpenAiServer();
  // AI is switched on for this bench only: handlers read the provider's base URL when they call it,
  // so the other benches' message figures carry no AI work (the room summary scheduler's count).
  const variable = bindingVariable('outbound:ai');
  const before = { url: process.env[variable], limit: config.RATE_LIMIT_THREAD_SUMMARY_PER_MINUTE };
  process.env[variable] = server.url;
  // The summaries below would pass the per-user limit, which is not what is measured.
  (config as { RATE_LIMIT_THREAD_SUMMARY_PER_MINUTE: number }).RATE_LIMIT_THREAD_SUMMARY_PER_MINUTE = 1_000_000;
  try {
    const project = await createProject(api, 'ai-bench');
    const token = await project.token('ai-bench-user');
    const roomId = 'ai-bench-room';
    await api.expect(201, '/rooms', { token, body: { id: roomId, type: 'group' } });
    const longest = 'x'.repeat(config.MESSAGE_MAX_LENGTH);
    const post = async (parentId?: number) =>
      (await api.expect(201, '/messages', { token, body: { roomId, content: longest, ...(parentId ? { parent_id: parentId } : {}) } })).body
        .id as number;
    // A tree: the root, 13 replies, each with two replies: 40 messages of the longest content.
    const root = await post();
    const firstLevel: number[] = [];
    for (let index = 0; index < 13; index++) firstLevel.push(await post(root));
    let leaf = root;
    for (const parent of firstLevel) for (let index = 0; index < 2; index++) leaf = await post(parent);
    const summarize = (messageId: number) => api.request(`/messages/${messageId}/summary`, { token, body: { roomId } });
    for (let attempt = 0; attempt < 50; attempt++) {
      if ((await summarize(leaf)).body?.messageCount === THREAD_SIZE) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }

    // Requests of one summary, named by a reply (the costlier case: its root is read too) and by the root.
    const requestsOf = async (messageId: number) =>
      recording({ dynamo: service.clients.dynamo, sqs: service.clients.sqs }, async (recorder) => {
        const answer = await summarize(messageId);
        if (answer.status !== 200) throw new Error(`ai bench: summary answered ${answer.status} ${JSON.stringify(answer.body)}`);
        return recorder.dynamo.map((call) => call.command);
      });
    // The consumers (push, room summaries, agent mentions) are done with the thread's messages by
    // now, so the recorder counts the summary's own requests only.
    await sleep(2000);
    const byReply = await requestsOf(leaf);
    const byRoot = await requestsOf(root);
    const threadReads = (commands: readonly string[]) => commands.filter((command) => command === 'GetItem' || command === 'Query').length;

    const latencies: number[] = [];
    for (let index = 0; index < SUMMARIES; index++) {
      const started = performance.now();
      const answer = await summarize(index % 2 === 0 ? leaf : root);
      if (answer.status !== 200) throw new Error(`ai bench: summary answered ${answer.status}`);
      latencies.push(performance.now() - started);
    }
    const prompt = server.requests.at(-1)?.messages.reduce((total, message) => total + message.content.length, 0) ?? 0;
    const result = {
      threadSize: THREAD_SIZE,
      messageChars: config.MESSAGE_MAX_LENGTH,
      requestsByReply: { total: byReply.length, threadReads: threadReads(byReply), byCommand: countBy(byReply, 1, 0) },
      requestsByRoot: { total: byRoot.length, threadReads: threadReads(byRoot), byCommand: countBy(byRoot, 1, 0) },
      latencyMs: { summaries: SUMMARIES, ...latencySummary(latencies) },
      prompt: { largestChars: prompt, conversationBound: config.AI_PROMPT_MAX_CHARS, messageBound: config.AI_PROMPT_MESSAGE_MAX_CHARS },
    };
    log(
      `  thread summary: ${byReply.length} requests (${result.requestsByReply.threadReads} thread reads), p50 ${result.latencyMs.p50} ms`,
    );
    return result;
  } finally {
    if (before.url === undefined) delete process.env[variable];
    else process.env[variable] = before.url;
    (config as { RATE_LIMIT_THREAD_SUMMARY_PER_MINUTE: number }).RATE_LIMIT_THREAD_SUMMARY_PER_MINUTE = before.limit;
    await server.close();
  }
}

type Ai = Awaited<ReturnType<typeof measure>>;

export const ai: Bench<Ai> = {
  id: 'ai',
  name: 'AI helpers',
  needs: 'service',
  run: measure,

  goals: (result) => [
    {
      id: 'ai-thread-reads',
      name: `Thread summary of a ${result.threadSize}-message thread: DynamoDB requests reading the thread`,
      target: `≤ ${GOALS.threadReadRequests}`,
      measured: `${result.requestsByReply.threadReads} (named by a reply; ${result.requestsByRoot.threadReads} by the root)`,
      pass: result.requestsByReply.threadReads <= GOALS.threadReadRequests,
    },
  ],

  section(result) {
    const commands = (byCommand: Record<string, number>) =>
      Object.entries(byCommand)
        .map(([command, count]) => `${command} ${count}`)
        .join(', ');
    const { latencyMs, prompt } = result;
    return `## AI helpers

A thread summary over HTTP against the local runtime, with the local OpenAI-compatible server of the tests as the model: it answers at once, so the figures are the service's own work (authentication, the room check, the rate limit, reading the thread, the quota) and none of a model's. The thread is a tree of ${result.threadSize} messages of ${result.messageChars} characters each, the longest a message may be (the root, 13 replies, two replies to each).

| Figure | Value |
| --- | --- |
| DynamoDB requests of one summary, named by a reply | ${result.requestsByReply.total} (${commands(result.requestsByReply.byCommand)}), of which ${result.requestsByReply.threadReads} read the thread (the message, its root, the thread's breadth-first Query) |
| DynamoDB requests of one summary, named by the root | ${result.requestsByRoot.total} (${commands(result.requestsByRoot.byCommand)}), of which ${result.requestsByRoot.threadReads} read the thread |
| Service time per summary, p50 / p99 / max (${latencyMs.summaries} summaries, model time ≈ 0) | ${latencyMs.p50} / ${latencyMs.p99} / ${latencyMs.max} ms |
| Largest prompt built (system + thread of ${result.threadSize} maximal messages) | ${prompt.largestChars} characters (conversation bound \`AI_PROMPT_MAX_CHARS\` = ${prompt.conversationBound}, each message cut at \`AI_PROMPT_MESSAGE_MAX_CHARS\` = ${prompt.messageBound}) |

The requests besides the thread reads are bookkeeping every AI route pays: the per-user rate limit window (UpdateItem) and the quota shard (UpdateItem); the room, membership, project and quota total come from the instance's caches after the first call.`;
  },
};
