import { setTimeout as sleep } from 'node:timers/promises';
import { OutboundError, type OutboundRequest, type OutboundResponse, send } from '#shared/outbound';
import * as z from '#shared/schema';

/**
 * The AI provider: any server speaking OpenAI's chat completions API (OpenAI itself, Ollama, vLLM,
 * LM Studio, gateways in front of other vendors). The base URL comes from settings
 * (`functions/wiring/bindings.ts` `outboundHosts`, `AI_BASE_URL`), so tests point it at a local server speaking
 * the same protocol (`test/support/ai/openai-server.ts`).
 *
 * Failures come out as one {@link AiProviderError} whose message is built here from fixed words,
 * the HTTP status and at most the provider's error code: never the API key, the prompt or the
 * provider's own text (OpenAI's 401 message quotes the key it was given).
 */

export interface ChatMessage {
  readonly role: 'system' | 'user' | 'assistant';
  readonly content: string;
}

export type AiFailure = 'ai_timeout' | 'ai_provider_error' | 'ai_bad_response';

/**
 * The provider failed. `ai_timeout`: no answer within `timeoutMs` on the last attempt;
 * `ai_provider_error`: a non-2xx answer (`status` set), an unreachable host or a base URL that is
 * not a URL; `ai_bad_response`: a 2xx answer without text. `message` never contains the API key,
 * the prompt or the provider's raw body beyond a short, sanitized reason.
 */
export class AiProviderError extends Error {
  constructor(
    readonly code: AiFailure,
    message: string,
    readonly status?: number,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'AiProviderError';
  }
}

export interface CompletionRequest {
  /** `https://api.openai.com/v1`, `http://127.0.0.1:11434/v1` (Ollama): `/chat/completions` is appended. */
  readonly baseUrl: string;
  /** Sent as `Authorization: Bearer <key>` when set and not empty; local servers need none. */
  readonly apiKey?: string;
  readonly model: string;
  readonly messages: readonly ChatMessage[];
  /** `max_tokens`. @default 512 */
  readonly maxTokens?: number;
  /** @default 0.2 */
  readonly temperature?: number;
  /** Per attempt: connecting, sending and receiving the whole answer. @default 20_000 */
  readonly timeoutMs?: number;
  /**
   * Attempts in all. Network errors, timeouts, 429 and 5xx are tried again; any other answer is
   * final (another 4xx would fail the same way, and a 2xx without text was billed already).
   * @default 3
   */
  readonly attempts?: number;
  /**
   * The wait after the first failed attempt; each next wait is four times longer (200, 800, 3200
   * ms), each at most 5 s, and never shorter than the provider's `Retry-After`. Tests shorten it.
   * @default 200
   */
  readonly backoffMs?: number;
}

export interface Completion {
  readonly content: string;
  /** The model the provider says answered (OpenAI names the dated snapshot); the requested one when it does not say. */
  readonly model: string;
  readonly promptTokens?: number;
  readonly completionTokens?: number;
}

const DEFAULT_MAX_TOKENS = 512;
const DEFAULT_TEMPERATURE = 0.2;
const DEFAULT_TIMEOUT_MS = 20_000;
const DEFAULT_ATTEMPTS = 3;
const DEFAULT_BACKOFF_MS = 200;
const BACKOFF_FACTOR = 4;
/**
 * The longest wait between attempts, and the longest `Retry-After` honoured: a provider asking for
 * more is not asked again within this call (the caller's queue or user may retry later), rather
 * than holding a function for its whole timeout.
 */
const MAX_WAIT_MS = 5000;
const MAX_ANSWER_BYTES = 1024 * 1024;
/** What of a provider's error body may reach a message: an identifier such as `invalid_api_key` or `rate_limit_exceeded`. */
const ERROR_CODE_PATTERN = /^[A-Za-z][\w.-]{0,63}$/;

/** Token counts are informative: a provider sending something odd there does not fail the call. */
const tokenCount = z.catch(z.optional(z.number().check(z.int(), z.nonnegative())), undefined);

/** The part of a chat completion this module reads; everything else of the answer is ignored. */
const completionAnswer = z.object({
  model: z.catch(z.optional(z.string()), undefined),
  choices: z
    .array(z.object({ message: z.object({ content: z.string().check(z.refine((content) => content.trim() !== '')) }) }))
    .check(z.minLength(1)),
  usage: z.catch(z.optional(z.nullable(z.object({ prompt_tokens: tokenCount, completion_tokens: tokenCount }))), undefined),
});

/** How one attempt failed, before it becomes an error or another attempt. */
interface Failure {
  readonly code: AiFailure;
  readonly reason: string;
  readonly status?: number;
  readonly retryable: boolean;
  /** The provider's `Retry-After`, in ms. */
  readonly retryAfterMs?: number;
  readonly cause?: OutboundError;
}

/**
 * Asks for one chat completion (`stream: false`), trying again on network errors, timeouts, 429 and
 * 5xx with an exponential backoff. A 2xx answer without `choices[0].message.content` text is not
 * tried again: it is the model's or the setting's doing (a tool call, a refusal, a base URL that is
 * not an OpenAI API), the next attempt would most likely answer the same, and the first was billed.
 * @throws AiProviderError when the provider does not answer with text after the attempts allowed
 */
export async function chatCompletion(request: CompletionRequest): Promise<Completion> {
  const attempts = Math.max(1, Math.floor(request.attempts ?? DEFAULT_ATTEMPTS));
  const backoffMs = Math.max(0, request.backoffMs ?? DEFAULT_BACKOFF_MS);
  const timeoutMs = request.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const outbound: OutboundRequest = {
    target: 'provider',
    url: `${request.baseUrl.replace(/\/+$/, '')}/chat/completions`,
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json',
      ...(request.apiKey ? { authorization: `Bearer ${request.apiKey}` } : {}),
    },
    body: JSON.stringify({
      model: request.model,
      messages: request.messages.map(({ role, content }) => ({ role, content })),
      max_tokens: request.maxTokens ?? DEFAULT_MAX_TOKENS,
      temperature: request.temperature ?? DEFAULT_TEMPERATURE,
      stream: false,
    }),
    timeoutMs,
    maxResponseBytes: MAX_ANSWER_BYTES,
  };

  return withAttempts(outbound, { attempts, backoffMs, apiKey: request.apiKey }, (response) => completionOf(response, request.model));
}

/**
 * Sends `outbound` until an answer `read` accepts, trying again on network errors, timeouts, 429 and
 * 5xx with an exponential backoff; `read` turns a 2xx answer into the result or a final failure.
 */
async function withAttempts<T extends object>(
  outbound: OutboundRequest,
  options: { readonly attempts: number; readonly backoffMs: number; readonly apiKey?: string },
  read: (response: OutboundResponse) => T | Failure,
): Promise<T> {
  const { attempts, backoffMs } = options;
  const timeoutMs = outbound.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  for (let attempt = 1; ; attempt += 1) {
    const outcome = await attemptOnce(outbound, timeoutMs, read);
    if (!isFailure(outcome)) return outcome;
    const retryAfterMs = outcome.retryAfterMs ?? 0;
    const last = !outcome.retryable || attempt >= attempts || retryAfterMs > MAX_WAIT_MS;
    if (last) {
      const tries = attempt > 1 ? ` (${attempt} attempts)` : '';
      const message = redact(`${outcome.reason}${tries}`, options.apiKey);
      throw new AiProviderError(outcome.code, message, outcome.status, outcome.cause ? { cause: outcome.cause } : undefined);
    }
    await sleep(Math.min(MAX_WAIT_MS, Math.max(backoffMs * BACKOFF_FACTOR ** (attempt - 1), retryAfterMs)));
  }
}

const isFailure = (outcome: object): outcome is Failure => 'reason' in outcome && 'retryable' in outcome;

async function attemptOnce<T>(
  outbound: OutboundRequest,
  timeoutMs: number,
  read: (response: OutboundResponse) => T | Failure,
): Promise<T | Failure> {
  let response: OutboundResponse;
  try {
    response = await send(outbound);
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return transportFailure(error, timeoutMs);
  }
  if (response.status < 200 || response.status > 299) return statusFailure(response);
  return read(response);
}

function completionOf(response: OutboundResponse, requestedModel: string): Completion | Failure {
  const answer = parseJson(response.body);
  const parsed = completionAnswer.safeParse(answer);
  if (!parsed.success) {
    const reason = answer === undefined ? 'is not JSON' : 'has no choices[0].message.content text';
    return { code: 'ai_bad_response', reason: `the AI provider's answer ${reason}`, status: response.status, retryable: false };
  }
  const { model, choices, usage } = parsed.data;
  return {
    content: (choices[0] as (typeof choices)[number]).message.content,
    model: model || requestedModel,
    ...(usage?.prompt_tokens === undefined ? {} : { promptTokens: usage.prompt_tokens }),
    ...(usage?.completion_tokens === undefined ? {} : { completionTokens: usage.completion_tokens }),
  };
}

export interface TranscriptionRequest {
  /** As {@link CompletionRequest.baseUrl}: `/audio/transcriptions` is appended. */
  readonly baseUrl: string;
  readonly apiKey?: string;
  readonly model: string;
  readonly audio: Buffer;
  readonly filename: string;
  readonly contentType: string;
  /** @default 60_000 */
  readonly timeoutMs?: number;
  /** @default 3 */
  readonly attempts?: number;
  /** @default 200 */
  readonly backoffMs?: number;
}

const transcriptionAnswer = z.object({ text: z.string() });

/**
 * Transcribes audio through OpenAI's `POST /audio/transcriptions` (multipart: `file`, `model`,
 * `response_format=json`), with the retries and failures of {@link chatCompletion}. An empty text
 * is a transcript (silence), not a failure.
 * @throws AiProviderError when the provider does not answer with `{ text }` after the attempts allowed
 */
export async function transcribeAudio(request: TranscriptionRequest): Promise<string> {
  const boundary = `----chat-${Date.now().toString(16)}${Math.random().toString(16).slice(2)}`;
  const field = (name: string, value: string) =>
    Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`, 'utf8');
  const body = Buffer.concat([
    field('model', request.model),
    field('response_format', 'json'),
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${request.filename.replace(/["\r\n]/g, '_')}"\r\n` +
        `Content-Type: ${request.contentType}\r\n\r\n`,
      'utf8',
    ),
    request.audio,
    Buffer.from(`\r\n--${boundary}--\r\n`, 'utf8'),
  ]);
  const outbound: OutboundRequest = {
    target: 'provider',
    url: `${request.baseUrl.replace(/\/+$/, '')}/audio/transcriptions`,
    method: 'POST',
    headers: {
      'content-type': `multipart/form-data; boundary=${boundary}`,
      accept: 'application/json',
      ...(request.apiKey ? { authorization: `Bearer ${request.apiKey}` } : {}),
    },
    body,
    timeoutMs: request.timeoutMs ?? 60_000,
    maxResponseBytes: MAX_ANSWER_BYTES,
  };
  const options = {
    attempts: Math.max(1, Math.floor(request.attempts ?? DEFAULT_ATTEMPTS)),
    backoffMs: Math.max(0, request.backoffMs ?? DEFAULT_BACKOFF_MS),
    apiKey: request.apiKey,
  };
  const result = await withAttempts(outbound, options, (response): { text: string } | Failure => {
    const parsed = transcriptionAnswer.safeParse(parseJson(response.body));
    if (parsed.success) return { text: parsed.data.text };
    return { code: 'ai_bad_response', reason: "the AI provider's transcription has no text", status: response.status, retryable: false };
  });
  return result.text.trim();
}

function transportFailure(error: OutboundError, timeoutMs: number): Failure {
  switch (error.code) {
    case 'timeout':
      return { code: 'ai_timeout', reason: `the AI provider did not answer within ${timeoutMs} ms`, retryable: true, cause: error };
    case 'response_too_large':
      return { code: 'ai_bad_response', reason: `the AI provider's answer is larger than ${MAX_ANSWER_BYTES} bytes`, retryable: false };
    case 'invalid_request':
      // The base URL setting is not a usable URL: no attempt would do better.
      return { code: 'ai_provider_error', reason: 'the AI provider base URL is not a valid http(s) URL', retryable: false };
    default: {
      // Only the errno (`ECONNREFUSED`): Node's message names the host and port, nothing of the request.
      const errno = (error.cause as NodeJS.ErrnoException | undefined)?.code;
      const detail = errno && ERROR_CODE_PATTERN.test(errno) ? ` (${errno})` : '';
      return { code: 'ai_provider_error', reason: `the AI provider could not be reached${detail}`, retryable: true, cause: error };
    }
  }
}

/** A non-2xx answer: its status, and the provider's error code when it is an identifier (OpenAI `error.code`, else `error.type`). */
function statusFailure(response: OutboundResponse): Failure {
  const { status } = response;
  const error = (parseJson(response.body) as { error?: { code?: unknown; type?: unknown } } | undefined)?.error;
  const providerCode = [error?.code, error?.type].find(
    (value): value is string => typeof value === 'string' && ERROR_CODE_PATTERN.test(value),
  );
  const retryable = status === 429 || status >= 500;
  const retryAfterMs = retryable ? retryAfter(response.headers['retry-after']) : undefined;
  const asks =
    retryAfterMs !== undefined && retryAfterMs > MAX_WAIT_MS ? `; it asks to retry after ${Math.ceil(retryAfterMs / 1000)} s` : '';
  return {
    code: 'ai_provider_error',
    reason: `the AI provider answered HTTP ${status}${providerCode ? ` (${providerCode})` : ''}${asks}`,
    status,
    retryable,
    ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
  };
}

/** `Retry-After` in ms, from seconds or an HTTP date (RFC 9110 §10.2.3); `undefined` when absent or unreadable. */
function retryAfter(value: string | undefined): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/**
 * The last guard: every reason is built from fixed words, a status and identifiers, but a provider
 * (or a proxy) echoing the key in its error code must not carry it into a log through the message.
 */
function redact(message: string, apiKey: string | undefined): string {
  return apiKey ? message.split(apiKey).join('[redacted]') : message;
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}
