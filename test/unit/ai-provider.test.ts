import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { inspect } from 'node:util';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { AiProviderError, type ChatMessage, chatCompletion } from '#shared/providers/ai';
import { type ChatBehaviour, defaultContent, type OpenAiServer, startOpenAiServer, wordCount } from '../support/ai/openai-server';

/**
 * The AI provider adapter of `functions/shared/providers/ai.ts` against a local server speaking
 * OpenAI's chat completions protocol on 127.0.0.1: the request on the wire, the answer read back,
 * the bounded retries, and failures that never carry the API key or the prompt.
 */

const messages: ChatMessage[] = [
  { role: 'system', content: 'Summarize the conversation as bullet points.' },
  { role: 'user', content: '[1] ada: the release moves to Friday\n[2] bob: fine by me' },
];

/** A URL nothing listens on: a port that was just free. */
async function closedPortUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}/v1`;
}

async function failureOf(call: Promise<unknown>): Promise<AiProviderError> {
  try {
    await call;
  } catch (error) {
    if (error instanceof AiProviderError) return error;
    throw error;
  }
  throw new Error('the call succeeded');
}

/** Every way an error reaches a log or a client. */
const renderings = (error: Error) => [error.message, String(error), JSON.stringify(error), inspect(error, { depth: 5 }), error.stack ?? ''];

let server: OpenAiServer;
const openServer = startOpenAiServer();

beforeEach(async () => {
  server = await openServer;
  server.reset();
});
afterAll(async () => {
  await (await openServer).close();
});

describe('chatCompletion', () => {
  it('posts the chat completion request and returns the answer with its usage', async () => {
    // Act
    const completion = await chatCompletion({
      baseUrl: server.url,
      apiKey: 'sk-test-happy',
      model: 'gpt-4o-mini',
      messages,
      maxTokens: 100,
      temperature: 0.5,
    });

    // Assess
    expect(server.requests).toHaveLength(1);
    const [request] = server.requests;
    expect(request?.authorization).toBe('Bearer sk-test-happy');
    expect(request?.body).toEqual({ model: 'gpt-4o-mini', messages, max_tokens: 100, temperature: 0.5, stream: false });
    const content = defaultContent(messages);
    expect(completion).toEqual({
      content,
      model: 'gpt-4o-mini',
      promptTokens: messages.reduce((sum, message) => sum + wordCount(message.content), 0),
      completionTokens: wordCount(content),
    });
    expect(content).toContain('the release moves to Friday');
  });

  it('sends no Authorization without a key, the default limits, and accepts a base URL ending in /', async () => {
    // Act
    const completion = await chatCompletion({ baseUrl: `${server.url}/`, model: 'llama3.2', messages });

    // Assess
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.authorization).toBeUndefined();
    expect(server.requests[0]?.body).toEqual({ model: 'llama3.2', messages, max_tokens: 512, temperature: 0.2, stream: false });
    expect(completion.content).toBe(defaultContent(messages));
  });

  it('returns the content the provider wrote and the model it names', async () => {
    // Prepare
    server.reply((request) => `answered ${request.messages.length} messages`);
    server.queue({ model: 'gpt-4o-mini-2024-07-18' });

    // Act
    const first = await chatCompletion({ baseUrl: server.url, model: 'gpt-4o-mini', messages });
    const second = await chatCompletion({ baseUrl: server.url, model: 'gpt-4o-mini', messages });

    // Assess
    expect(first).toMatchObject({ content: 'answered 2 messages', model: 'gpt-4o-mini-2024-07-18' });
    expect(second).toMatchObject({ content: 'answered 2 messages', model: 'gpt-4o-mini' });
  });

  it('leaves the token counts out when the provider sends no usage', async () => {
    // Prepare
    server.reply({ body: () => ({ choices: [{ index: 0, message: { role: 'assistant', content: 'hi' } }], usage: null }) });

    // Act
    const completion = await chatCompletion({ baseUrl: server.url, model: 'm', messages });

    // Assess
    expect(completion).toEqual({ content: 'hi', model: 'm' });
  });
});

describe('retries', () => {
  it('tries again after a 500 and returns the second answer', async () => {
    // Prepare
    server.queue({ status: 500 });

    // Act
    const completion = await chatCompletion({ baseUrl: server.url, model: 'm', messages, backoffMs: 1 });

    // Assess
    expect(server.requests).toHaveLength(2);
    expect(completion.content).toBe(defaultContent(messages));
  });

  it('waits the Retry-After of a 429 before trying again', async () => {
    // Prepare
    server.queue({ status: 429, retryAfter: 1 });
    const started = Date.now();

    // Act
    const completion = await chatCompletion({ baseUrl: server.url, model: 'm', messages, backoffMs: 1 });

    // Assess
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(server.requests).toHaveLength(2);
    expect(completion.content).toBe(defaultContent(messages));
  });

  it('does not wait for a Retry-After above 5 s: the 429 is final at once', async () => {
    // Prepare
    server.reply({ status: 429, retryAfter: 60, times: 3 });
    const started = Date.now();

    // Act
    const error = await failureOf(chatCompletion({ baseUrl: server.url, model: 'm', messages, backoffMs: 1 }));

    // Assess
    expect(Date.now() - started).toBeLessThan(1000);
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ code: 'ai_provider_error', status: 429 });
    expect(error.message).toContain('rate_limit_exceeded');
    expect(error.message).toContain('60 s');
  });

  it('tries again after a timeout', async () => {
    // Prepare
    server.queue({ delayMs: 400 });

    // Act
    const completion = await chatCompletion({ baseUrl: server.url, model: 'm', messages, timeoutMs: 100, backoffMs: 1 });

    // Assess
    expect(server.requests).toHaveLength(2);
    expect(completion.content).toBe(defaultContent(messages));
  });

  it.each([400, 401, 404, 422])('does not try again after a %i', async (status) => {
    // Prepare
    server.reply({ status, times: 3 });

    // Act
    const error = await failureOf(chatCompletion({ baseUrl: server.url, model: 'm', messages, backoffMs: 1 }));

    // Assess
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ code: 'ai_provider_error', status });
    expect(error.message).toContain(`HTTP ${status}`);
  });

  it('gives up after the attempts allowed with the last status', async () => {
    // Prepare
    server.reply({ status: 503, times: 5 });

    // Act
    const error = await failureOf(chatCompletion({ baseUrl: server.url, model: 'm', messages, attempts: 3, backoffMs: 1 }));

    // Assess
    expect(server.requests).toHaveLength(3);
    expect(error).toBeInstanceOf(AiProviderError);
    expect(error).toMatchObject({ name: 'AiProviderError', code: 'ai_provider_error', status: 503 });
    expect(error.message).toContain('3 attempts');
  });
});

describe('failures', () => {
  it('reports ai_timeout when no attempt is answered in time', async () => {
    // Prepare
    server.reply({ delayMs: 1000, times: 2 });
    const started = Date.now();

    // Act
    const error = await failureOf(chatCompletion({ baseUrl: server.url, model: 'm', messages, timeoutMs: 100, attempts: 2, backoffMs: 1 }));

    // Assess
    expect(Date.now() - started).toBeLessThan(900);
    expect(server.requests).toHaveLength(2);
    expect(error).toMatchObject({ code: 'ai_timeout' });
    expect(error.status).toBeUndefined();
  });

  const badAnswers: [string, ChatBehaviour][] = [
    ['a body that is not JSON', { malformed: true }],
    ['no choices', { body: () => ({ id: 'chatcmpl-1', object: 'chat.completion', choices: [] }) }],
    ['no choices at all', { body: () => ({ error: { message: 'oops' } }) }],
    ['a null content (a tool call)', { body: () => ({ choices: [{ index: 0, message: { role: 'assistant', content: null } }] }) }],
    ['an empty content', { content: ' \n ' }],
    ['an answer over 1 MB', { content: 'x'.repeat(1_100_000) }],
  ];
  it.each(badAnswers)('reports ai_bad_response for %s, without trying again', async (_, behaviour) => {
    // Prepare
    server.reply({ ...behaviour, times: 3 });

    // Act
    const error = await failureOf(chatCompletion({ baseUrl: server.url, model: 'm', messages, backoffMs: 1 }));

    // Assess
    expect(server.requests).toHaveLength(1);
    expect(error).toMatchObject({ code: 'ai_bad_response' });
  });

  it('reports ai_provider_error without a status when the provider cannot be reached', async () => {
    // Prepare
    const baseUrl = await closedPortUrl();

    // Act
    const error = await failureOf(chatCompletion({ baseUrl, model: 'm', messages, attempts: 2, backoffMs: 1 }));

    // Assess
    expect(error).toMatchObject({ code: 'ai_provider_error' });
    expect(error.status).toBeUndefined();
    expect(error.message).toContain('ECONNREFUSED');
    expect(error.message).toContain('2 attempts');
  });

  it('reports ai_provider_error for a base URL that is not a URL, without trying again', async () => {
    // Act
    const started = Date.now();
    const error = await failureOf(chatCompletion({ baseUrl: 'api.openai.com/v1', model: 'm', messages, backoffMs: 500 }));

    // Assess
    expect(Date.now() - started).toBeLessThan(400);
    expect(error).toMatchObject({ code: 'ai_provider_error' });
  });
});

describe('secrets', () => {
  const apiKey = 'sk-live-9f8e7d6c5b4a39281706f5e4d3c2b1a0';
  const prompt: ChatMessage[] = [{ role: 'user', content: 'PRIVATE-PROMPT-MARKER the merger closes Monday' }];

  it('keeps the key out of a 401 whose body quotes the Authorization header', async () => {
    // Prepare
    const keyed = await startOpenAiServer({ apiKey: 'sk-the-right-one' });

    try {
      // Act
      const error = await failureOf(chatCompletion({ baseUrl: keyed.url, apiKey, model: 'm', messages: prompt, backoffMs: 1 }));

      // Assess
      expect(keyed.requests).toHaveLength(0);
      expect(error).toMatchObject({ code: 'ai_provider_error', status: 401 });
      expect(error.message).toContain('invalid_api_key');
      for (const text of renderings(error)) {
        expect(text).not.toContain(apiKey);
        expect(text).not.toContain('PRIVATE-PROMPT-MARKER');
        expect(text).not.toContain('Incorrect API key');
      }
    } finally {
      await keyed.close();
    }
  });

  it('keeps the key out even when the provider echoes it as its error code', async () => {
    // Prepare
    server.reply({ status: 403, body: () => ({ error: { message: `key ${apiKey}`, type: apiKey, code: apiKey } }) });

    // Act
    const error = await failureOf(chatCompletion({ baseUrl: server.url, apiKey, model: 'm', messages: prompt }));

    // Assess
    expect(server.requests[0]?.authorization).toBe(`Bearer ${apiKey}`);
    expect(error).toMatchObject({ code: 'ai_provider_error', status: 403 });
    for (const text of renderings(error)) expect(text).not.toContain(apiKey);
  });

  it.each<[string, ChatBehaviour]>([
    ['a timeout', { delayMs: 1000 }],
    ['a 500', { status: 500 }],
    ['a bad answer', { body: () => ({ choices: [{ message: { content: 42 } }], echo: apiKey }) }],
  ])('keeps the key and the prompt out of %s', async (_, behaviour) => {
    // Prepare
    server.reply(behaviour);

    // Act
    const error = await failureOf(
      chatCompletion({ baseUrl: server.url, apiKey, model: 'm', messages: prompt, timeoutMs: 100, attempts: 1 }),
    );

    // Assess
    expect(error).toBeInstanceOf(AiProviderError);
    for (const text of renderings(error)) {
      expect(text).not.toContain(apiKey);
      expect(text).not.toContain('PRIVATE-PROMPT-MARKER');
    }
  });
});
