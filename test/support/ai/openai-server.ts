import { createHash } from 'node:crypto';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import busboy from 'busboy';

/**
 * A local OpenAI-compatible provider on 127.0.0.1 speaking what `functions/shared/providers/ai.ts`
 * talks to: `POST /v1/chat/completions` with the real request and answer shapes, OpenAI's error
 * bodies, and scripted misbehaviour (errors, `Retry-After`, bodies that are not JSON, slow answers);
 * and `POST /v1/audio/transcriptions` (multipart `file` and `model`, answering `{ text }`, the text
 * being {@link transcriptOf} the audio). Point `AI_BASE_URL` at `url`.
 */

/** A transcription request received: the multipart fields and the file as sent. */
export interface RecordedTranscription {
  readonly model: string;
  readonly filename: string;
  readonly contentType: string;
  readonly audio: Buffer;
  readonly authorization: string | undefined;
}

/** What the server "hears" in an audio file: its size and a digest, so a test knows the transcript of the bytes it sent. */
export const transcriptOf = (audio: Buffer) =>
  `heard ${audio.length} bytes ${createHash('sha256').update(audio).digest('hex').slice(0, 12)}`;

/** The multipart body of a transcription request, or `undefined` when it lacks the file or the model. */
function parseTranscription(
  contentType: string | undefined,
  body: Buffer,
  authorization: string | undefined,
): Promise<RecordedTranscription | undefined> {
  return new Promise((resolve) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({ headers: { 'content-type': contentType ?? '' } });
    } catch {
      return resolve(undefined);
    }
    const fields: Record<string, string> = {};
    let file: { filename: string; contentType: string; chunks: Buffer[] } | undefined;
    parser.on('field', (name, value) => {
      fields[name] = value;
    });
    parser.on('file', (name, stream, info) => {
      const chunks: Buffer[] = [];
      if (name === 'file') file = { filename: info.filename ?? '', contentType: info.mimeType, chunks };
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    });
    parser.on('error', () => resolve(undefined));
    parser.on('close', () => {
      if (!file || !fields.model) return resolve(undefined);
      resolve({
        model: fields.model,
        filename: file.filename,
        contentType: file.contentType,
        audio: Buffer.concat(file.chunks),
        authorization,
      });
    });
    parser.end(body);
  });
}

export interface RecordedChatMessage {
  readonly role: string;
  readonly content: string;
}

/** A chat completion request received (one whose body was a valid request; others get a 400 and are not kept). */
export interface RecordedChatRequest {
  readonly model: string;
  readonly messages: readonly RecordedChatMessage[];
  /** The `Authorization` header as sent, if any. */
  readonly authorization: string | undefined;
  /** The whole JSON body. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** How the server answers one request (or `times` requests). Without `status`, a 200 completion. */
export interface ChatBehaviour {
  /** A non-2xx answers OpenAI's error body for that status. @default 200 */
  readonly status?: number;
  /** Seconds, sent as `Retry-After`. */
  readonly retryAfter?: number;
  /** Answers a truncated JSON body (with `status`). */
  readonly malformed?: boolean;
  /** Waits this long before answering; a client that gives up first gets nothing. */
  readonly delayMs?: number;
  /** The completion's text (a 2xx). @default the content function's */
  readonly content?: string;
  /** The model the answer names. @default the requested model */
  readonly model?: string;
  /** The whole JSON body to answer instead of the completion or error (with `status`). */
  readonly body?: (request: RecordedChatRequest) => unknown;
  /** How many successive requests this applies to. @default 1 */
  readonly times?: number;
}

export type ContentFunction = (request: RecordedChatRequest) => string;

export interface OpenAiServer {
  /** The base URL including `/v1`: `http://127.0.0.1:<port>/v1`. */
  readonly url: string;
  readonly requests: readonly RecordedChatRequest[];
  readonly transcriptions: readonly RecordedTranscription[];
  /**
   * Sets how it answers from now on, dropping any scripted behaviours: a function gives the content
   * of every 200 answer; a behaviour applies to the next `times` requests, then the content
   * function answers again.
   */
  reply(how: ContentFunction | ChatBehaviour): void;
  /** Scripts successive answers after those already scripted, one behaviour per request (or its `times`). */
  queue(...behaviours: ChatBehaviour[]): void;
  /** Forgets requests, scripted behaviours and the content function. */
  reset(): void;
  close(): Promise<void>;
}

export interface OpenAiServerOptions {
  /**
   * The key `Authorization: Bearer <key>` must carry; without it any (or no) header is accepted. A
   * wrong one gets OpenAI's 401, harsher than the real one: its message quotes the whole header
   * (OpenAI masks the middle of the key), so a client that leaks provider text leaks the key.
   */
  readonly apiKey?: string;
}

/** Whitespace-separated words: the server's token count for `usage`. */
export const wordCount = (text: string): number => text.split(/\s+/).filter(Boolean).length;

/** The default answer: bullet lines naming the start of the last user message. */
export function defaultContent(messages: readonly RecordedChatMessage[]): string {
  const lastUser = messages.findLast((message) => message.role === 'user')?.content ?? '';
  return `- point one: ${lastUser.replace(/\s+/g, ' ').trim().slice(0, 60)}\n- point two`;
}

/** OpenAI's error bodies, by status. */
function errorBody(status: number, authorization: string | undefined): unknown {
  const error = (message: string, type: string, code: string | null) => ({ error: { message, type, param: null, code } });
  switch (status) {
    case 400:
      return error(
        "We could not parse the JSON body of your request. (HINT: This likely means you aren't using your HTTP library correctly.)",
        'invalid_request_error',
        null,
      );
    case 401:
      return error(`Incorrect API key provided: ${authorization ?? '(none)'}.`, 'invalid_request_error', 'invalid_api_key');
    case 404:
      return error('The model does not exist or you do not have access to it.', 'invalid_request_error', 'model_not_found');
    case 429:
      return error('Rate limit reached for requests. Please try again later.', 'requests', 'rate_limit_exceeded');
    default:
      return status >= 500
        ? error('The server had an error while processing your request. Sorry about that!', 'server_error', null)
        : error(`HTTP ${status}`, 'invalid_request_error', null);
  }
}

function parseRequest(text: string, authorization: string | undefined): RecordedChatRequest | undefined {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const { model, messages } = body as Record<string, unknown>;
  if (typeof model !== 'string' || !Array.isArray(messages)) return undefined;
  const valid = messages.every(
    (message: unknown) =>
      typeof message === 'object' &&
      message !== null &&
      typeof (message as RecordedChatMessage).role === 'string' &&
      typeof (message as RecordedChatMessage).content === 'string',
  );
  if (!valid) return undefined;
  return { model, messages: messages as RecordedChatMessage[], authorization, body: body as Record<string, unknown> };
}

export async function startOpenAiServer(options: OpenAiServerOptions = {}): Promise<OpenAiServer> {
  const requests: RecordedChatRequest[] = [];
  const transcriptions: RecordedTranscription[] = [];
  const scripted: ChatBehaviour[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let contentOf: ContentFunction = (request) => defaultContent(request.messages);
  let completions = 0;

  const json = (response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void => {
    response.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };

  const nextBehaviour = (): ChatBehaviour => {
    const behaviour = scripted[0];
    if (!behaviour) return {};
    const times = behaviour.times ?? 1;
    if (times <= 1) scripted.shift();
    else scripted[0] = { ...behaviour, times: times - 1 };
    return behaviour;
  };

  function answer(request: RecordedChatRequest, behaviour: ChatBehaviour, response: ServerResponse) {
    const status = behaviour.status ?? 200;
    const headers: Record<string, string> = behaviour.retryAfter === undefined ? {} : { 'retry-after': String(behaviour.retryAfter) };
    if (behaviour.malformed) {
      return void response.writeHead(status, { 'content-type': 'application/json', ...headers }).end('{"id":"chatcmpl-1","choices":[{');
    }
    if (behaviour.body) return json(response, status, behaviour.body(request), headers);
    if (status < 200 || status > 299) return json(response, status, errorBody(status, request.authorization), headers);
    const content = behaviour.content ?? contentOf(request);
    const promptTokens = request.messages.reduce((sum, message) => sum + wordCount(message.content), 0);
    const completionTokens = wordCount(content);
    completions += 1;
    json(
      response,
      status,
      {
        id: `chatcmpl-${completions}`,
        object: 'chat.completion',
        created: Math.floor(Date.now() / 1000),
        model: behaviour.model ?? request.model,
        choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
        usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
      },
      headers,
    );
  }

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const path = new URL(request.url ?? '/', 'http://127.0.0.1').pathname;
      if (path === '/v1/audio/transcriptions' && request.method === 'POST') {
        const authorization = request.headers.authorization;
        if (options.apiKey !== undefined && authorization !== `Bearer ${options.apiKey}`)
          return json(response, 401, errorBody(401, authorization));
        return void parseTranscription(request.headers['content-type'], Buffer.concat(chunks), authorization).then((recorded) => {
          if (!recorded) return json(response, 400, errorBody(400, authorization));
          transcriptions.push(recorded);
          json(response, 200, { text: transcriptOf(recorded.audio) });
        });
      }
      if (path !== '/v1/chat/completions') {
        return json(response, 404, {
          error: { message: `Invalid URL (${request.method} ${path})`, type: 'invalid_request_error', param: null, code: null },
        });
      }
      if (request.method !== 'POST') return json(response, 405, errorBody(405, undefined));
      const authorization = request.headers.authorization;
      if (options.apiKey !== undefined && authorization !== `Bearer ${options.apiKey}`)
        return json(response, 401, errorBody(401, authorization));
      const recorded = parseRequest(Buffer.concat(chunks).toString('utf8'), authorization);
      if (!recorded) return json(response, 400, errorBody(400, authorization));
      requests.push(recorded);
      const behaviour = nextBehaviour();
      if (!behaviour.delayMs) return answer(recorded, behaviour, response);
      const timer = setTimeout(() => {
        timers.delete(timer);
        if (!response.destroyed) answer(recorded, behaviour, response);
      }, behaviour.delayMs);
      timers.add(timer);
      // A client that gave up closed the connection: nothing to answer.
      response.on('close', () => {
        clearTimeout(timer);
        timers.delete(timer);
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests,
    transcriptions,
    reply: (how) => {
      scripted.length = 0;
      if (typeof how === 'function') contentOf = how;
      else scripted.push(how);
    },
    queue: (...behaviours) => {
      scripted.push(...behaviours);
    },
    reset: () => {
      requests.length = 0;
      transcriptions.length = 0;
      scripted.length = 0;
      contentOf = (request) => defaultContent(request.messages);
    },
    close: async () => {
      for (const timer of timers) clearTimeout(timer);
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
