import { countInvocation, requireQuota } from '#domain/ai/quota';
import { boundIfSet } from '#shared/bindings';
import { config } from '#shared/config';
import { HttpError } from '#shared/errors';
import { logger } from '#shared/logger';
import { AiProviderError, type ChatMessage, chatCompletion } from '#shared/providers/ai';
import { secretValue } from '#shared/secrets';

/**
 * The one way the domain asks the AI provider: is AI configured, is the project within its quota,
 * which model, and what a provider failure means to a client. Prompts are built by the callers
 * with {@link conversation}, which bounds them.
 */

export type AiPurpose = 'thread_summary' | 'room_summary' | 'handoff_summary' | 'suggestions' | 'agent';

export class AiNotConfiguredError extends HttpError {
  constructor() {
    super(503, 'ai_not_configured', 'AI is not configured on this service (AI_BASE_URL)');
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
      return config.AI_SUMMARY_MODEL ?? config.AI_SUGGEST_MODEL ?? config.AI_MODEL;
    case 'suggestions':
      return config.AI_SUGGEST_MODEL ?? config.AI_MODEL;
    case 'agent':
      return agentModel ?? config.AI_MODEL;
  }
}

export interface AiAnswer {
  readonly content: string;
  readonly model: string;
}

/**
 * One AI call for a project: configuration, quota (402), the provider with its timeouts and
 * bounded retries, then one `agent_invocations`. A provider failure is a 502 whose code says which
 * (`ai_timeout`, `ai_provider_error`, `ai_bad_response`); the key never appears in it.
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
  try {
    const completion = await chatCompletion({
      baseUrl,
      ...(apiKey ? { apiKey } : {}),
      model,
      messages,
      maxTokens: options.maxTokens ?? 512,
      timeoutMs: config.AI_TIMEOUT_MS,
      attempts: config.AI_ATTEMPTS,
    });
    return { content: completion.content.trim(), model: completion.model || model };
  } catch (error) {
    if (!(error instanceof AiProviderError)) throw error;
    logger.warn('ai.provider_failed', { projectId, purpose, model, code: error.code, status: error.status });
    throw new HttpError(502, error.code, `The AI provider failed (${error.code})`);
  } finally {
    // A call the provider answered or refused still used the project's quota: the provider may bill it.
    await countInvocation(projectId);
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
 * Messages as prompt text, bounded: each cut to `AI_PROMPT_MESSAGE_MAX_CHARS`, and the oldest
 * dropped once the whole passes `AI_PROMPT_MAX_CHARS`, so no room, however long its messages,
 * makes a prompt bigger than the settings allow.
 */
export function conversation(messages: readonly PromptMessage[]): string {
  const lines: string[] = [];
  let size = 0;
  for (const message of [...messages].reverse()) {
    const content =
      message.content.length > config.AI_PROMPT_MESSAGE_MAX_CHARS
        ? `${message.content.slice(0, config.AI_PROMPT_MESSAGE_MAX_CHARS)}…`
        : message.content;
    const line = `[${message.id}] ${message.userId}: ${content.replace(/\s+/g, ' ')}`;
    if (size + line.length + 1 > config.AI_PROMPT_MAX_CHARS) break;
    lines.push(line);
    size += line.length + 1;
  }
  return lines.reverse().join('\n');
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
