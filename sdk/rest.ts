import { ChatError, errorFromBody, toChatError } from './errors.js';
import type { ClientSettings } from './settings.js';
import type { Message } from './types.js';
import { messagesIn } from './wire-messages.js';

const PAGE_SIZE = 100;
const REQUEST_TIMEOUT_MS = 15_000;
const FLAGS_TIMEOUT_MS = 5000;

/** A message to store, as `POST /rooms/{roomId}/messages` and the WebSocket's `message` frame take it. */
export interface MessageInput {
  readonly content: string;
  readonly clientMessageId: string;
  readonly parent_id?: number;
  readonly attachments?: readonly string[];
}

/** One page of `GET /rooms/{roomId}/messages?after=`, oldest first. */
export interface MessagePage {
  readonly messages: Message[];
  readonly hasMore: boolean;
}

/** The room's REST routes, called with the client's token. Failures throw `ChatError`s (`network_error` when there was no answer). */
export class RoomRest {
  private readonly messagesPath: string;

  constructor(private readonly settings: ClientSettings) {
    this.messagesPath = `/rooms/${encodeURIComponent(settings.roomId)}/messages`;
  }

  /** The token for the next request or connection: `getToken`'s answer (so a renewed one is picked up), else `token`. */
  async token(): Promise<string> {
    if (this.settings.getToken) {
      try {
        return await this.settings.getToken();
      } catch (error) {
        throw toChatError(error, 'token_unavailable');
      }
    }
    return this.settings.token as string;
  }

  /** The room's newest `limit` messages, oldest first. */
  async latestMessages(limit: number): Promise<Message[]> {
    const page = await this.request<{ messages?: unknown }>('GET', `${this.messagesPath}?limit=${limit}`);
    return messagesIn(page?.messages);
  }

  /** The messages after id `after`, one page. */
  async messagesAfter(after: number): Promise<MessagePage> {
    const page = await this.request<{ messages?: unknown; hasMore?: unknown }>(
      'GET',
      `${this.messagesPath}?after=${after}&limit=${PAGE_SIZE}`,
    );
    return { messages: messagesIn(page?.messages), hasMore: Boolean(page?.hasMore) };
  }

  /** Stores a message; resolves with the stored message as the service answered it. */
  postMessage(input: MessageInput): Promise<Message> {
    return this.request<Message>('POST', this.messagesPath, input);
  }

  /** `GET /client/feature-flags`, answered quickly or not at all: the client connects meanwhile. */
  featureFlags(): Promise<unknown> {
    return this.request<unknown>('GET', '/client/feature-flags', undefined, FLAGS_TIMEOUT_MS);
  }

  /** Why the room refuses this client, as its REST route says (`undefined`: it does not). */
  async refusal(): Promise<ChatError | undefined> {
    try {
      await this.request('GET', `${this.messagesPath}?limit=1`);
      return undefined;
    } catch (error) {
      return toChatError(error);
    }
  }

  private async request<T>(method: string, path: string, body?: unknown, timeoutMs = REQUEST_TIMEOUT_MS): Promise<T> {
    const token = await this.token();
    const headers: Record<string, string> = { authorization: `Bearer ${token}` };
    if (body !== undefined) headers['content-type'] = 'application/json';
    let response: Response;
    let text: string;
    try {
      response = await this.settings.fetch(`${this.settings.baseUrl}${path}`, {
        method,
        headers,
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      throw new ChatError('network_error', `${method} ${path} failed: ${(error as Error).message}`, { cause: error });
    }
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // A gateway's HTML error page: the status still says what happened.
    }
    if (!response.ok) throw errorFromBody(parsed, response.status, response.headers.get('retry-after'));
    return parsed as T;
  }
}
