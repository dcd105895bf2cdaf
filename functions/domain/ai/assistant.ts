import { countInvocation, requireQuota } from '#domain/ai/quota';
import { boundIfSet } from '#shared/bindings';
import { config } from '#shared/config';
import { BadRequestError, ConflictError, HttpError, NotConfiguredError } from '#shared/errors';
import { logger } from '#shared/logger';
import { countMetric } from '#shared/metrics';
import { AiProviderError, type ChatMessage, chatCompletion } from '#shared/providers/ai';
import { secretValue } from '#shared/secrets';

/**
 * The one way the domain asks the AI provider: is AI configured, is the project within its quota,
 * which model, and what a provider failure means to a client. Prompts are built by the callers
 * with {@link conversation}, which bounds them.
 */

export type AiPurpose = 'thread_summary' | 'room_summary' | 'handoff_summary' | 'digest' | 'suggestions' | 'agent';

export class AiNotConfiguredError extends NotConfiguredError {
  constructor() {
    super(
      'ai_not_configured',
      'AI is not configured on this service: set AI_BASE_URL to an OpenAI-compatible base URL including /v1 ' +
        '(an environment variable locally, a CDK context key on AWS), for example http://127.0.0.1:11434/v1 for Ollama',
    );
  }
}

/** The provider's base URL when AI is configured for this function; `undefined` when not. */
export const aiBaseUrl = (): string | undefined => boundIfSet('outbound:ai');
export const isAiConfigured = (): boolean => aiBaseUrl() !== undefined;

/** Throws `503 ai_not_configured` without a base URL: every AI route answers so, and nothing else of it runs. */
export function requireAi(): string {
  const baseUrl = aiBaseUrl();
  if (!baseUrl) throw new AiNotConfiguredError();
  return baseUrl;
}

/** The spec's model choice: summaries take `AI_SUMMARY_MODEL`, then `AI_SUGGEST_MODEL`, then `AI_MODEL`. */
export function modelFor(purpose: AiPurpose, agentModel?: string): string {
  switch (purpose) {
    case 'thread_summary':
    case 'room_summary':
    case 'handoff_summary':
    case 'digest':
      return config.AI_SUMMARY_MODEL ?? config.AI_SUGGEST_MODEL ?? config.AI_MODEL;
    case 'suggestions':
      return config.AI_SUGGEST_MODEL ?? config.AI_MODEL;
    case 'agent':
      if (agentModel === undefined || ALLOWED_AGENT_MODELS.has(agentModel)) return agentModel ?? config.AI_MODEL;
      // Stored before the allow-list changed: the operator's key never pays for a model it no longer allows.
      logger.warn('ai.agent_model_not_allowed', { model: agentModel, fallback: config.AI_MODEL });
      return config.AI_MODEL;
  }
}

/** `AI_ALLOWED_MODELS`, or without it the models the deployment already pays for. */
const ALLOWED_AGENT_MODELS: ReadonlySet<string> = new Set(
  config.AI_ALLOWED_MODELS ?? [config.AI_MODEL, config.AI_SUGGEST_MODEL, config.AI_SUMMARY_MODEL].flatMap((model) => model ?? []),
);

/** An agent may name only an allowed model: it is sent on the operator's key. 400 `model_not_allowed` otherwise. */
export function requireAllowedAgentModel(model: string): void {
  if (ALLOWED_AGENT_MODELS.has(model)) return;
  throw new BadRequestError(`The model ${model} is not allowed here`, { allowedModels: [...ALLOWED_AGENT_MODELS] }, 'model_not_allowed');
}

export interface AiAnswer {
  readonly content: string;
  readonly model: string;
}

/**
 * How long each purpose may wait for the provider, all attempts included. Routes behind API
 * Gateway must answer within its 30 s (their functions may run 29 s); a handoff must not wait on AI
 * at all long, since it falls back to an excerpt; a room summary runs in a queue worker, and so
 * does a digest, which falls back to counts and top messages.
 */
const BUDGET_MS: Readonly<Record<AiPurpose, number>> = {
  thread_summary: 24_000,
  suggestions: 24_000,
  agent: 24_000,
  handoff_summary: 5_000,
  room_summary: 60_000,
  // A digest worker delivers a batch of users; a room's summary must not hold all of them long.
  digest: 20_000,
};

/** Per-attempt timeout and attempts that fit the purpose's budget. */
function attemptsWithin(purpose: AiPurpose): { timeoutMs: number; attempts: number } {
  const budget = BUDGET_MS[purpose];
  const timeoutMs = Math.min(config.AI_TIMEOUT_MS, budget);
  const attempts = purpose === 'handoff_summary' ? 1 : Math.max(1, Math.min(config.AI_ATTEMPTS, Math.floor(budget / timeoutMs)));
  return { timeoutMs, attempts };
}

/**
 * One AI call for a project: configuration, quota (402), the provider within the purpose's budget,
 * counted as one `agent_invocations` before it is made (the provider may bill a call that fails,
 * and a count written after the answer could fail and turn a paid answer into an error). A
 * provider failure is a 502 whose code says which (`ai_timeout`, `ai_provider_error`,
 * `ai_bad_response`); the key never appears in it.
 */
export async function askAi(
  projectId: string,
  purpose: AiPurpose,
  messages: readonly ChatMessage[],
  options: { model?: string; maxTokens?: number } = {},
): Promise<AiAnswer> {
  const baseUrl = requireAi();
  await requireQuota(projectId);
  const model = modelFor(purpose, options.model);
  const apiKey = boundIfSet('secret:ai-key') ? await secretValue('ai-key') : undefined;
  await countInvocation(projectId);
  try {
    const completion = await chatCompletion({
      baseUrl,
      ...(apiKey ? { apiKey } : {}),
      model,
      messages,
      maxTokens: options.maxTokens ?? 512,
      ...attemptsWithin(purpose),
    });
    return { content: completion.content.trim(), model: completion.model || model };
  } catch (error) {
    if (!(error instanceof AiProviderError)) throw error;
    // The reason is built from fixed words, a status and the provider's error code (never the key
    // or the prompt): what an operator needs to tell a wrong URL from a wrong key or a slow model.
    logger.warn('ai.provider_failed', { projectId, purpose, model, code: error.code, status: error.status, reason: error.message });
    countMetric('ai_errors', 1, { projectId });
    throw new HttpError(502, error.code, `The AI provider failed (${error.code})`);
  }
}

/** A stored message as a prompt line needs it. */
export interface PromptMessage {
  readonly id: number;
  readonly userId: string;
  readonly content: string;
  readonly createdAt: string;
}

/**
 * Messages as prompt text, bounded: each cut to `AI_PROMPT_MESSAGE_MAX_CHARS`, and once the whole
 * passes `AI_PROMPT_MAX_CHARS` the rest is dropped, so no room, however long its messages, makes a
 * prompt bigger than the settings allow. `keep: 'newest'` (a room's recent talk) drops the oldest;
 * `keep: 'first'` (a thread, root first) drops the last.
 */
export function conversation(messages: readonly PromptMessage[], keep: 'newest' | 'first' = 'newest'): string {
  const lines: string[] = [];
  let size = 0;
  for (const message of keep === 'newest' ? [...messages].reverse() : messages) {
    const content =
      message.content.length > config.AI_PROMPT_MESSAGE_MAX_CHARS
        ? `${message.content.slice(0, config.AI_PROMPT_MESSAGE_MAX_CHARS)}…`
        : message.content;
    const line = `[${message.id}] ${message.userId}: ${content.replace(/\s+/g, ' ')}`;
    if (size + line.length + 1 > config.AI_PROMPT_MAX_CHARS) break;
    lines.push(line);
    size += line.length + 1;
  }
  return (keep === 'newest' ? lines.reverse() : lines).join('\n');
}

/** `409 e2e_room`: an end-to-end encrypted room's messages are ciphertext to the service, and never go to a provider. */
export function refuseE2eRoom(room: { readonly e2eEnabled: boolean }): void {
  if (room.e2eEnabled) throw new ConflictError('e2e_room', 'AI cannot read an end-to-end encrypted room');
}

/** Bullet lines (`- ...`) out of whatever list the model wrote. */
export function bulletLines(text: string, max = 12): string {
  const lines = text
    .split('\n')
    .map((line) => line.trim().replace(/^([-*•]|\d+[.)])\s*/, ''))
    .filter(Boolean)
    .slice(0, max);
  return lines.map((line) => `- ${line}`).join('\n');
}
