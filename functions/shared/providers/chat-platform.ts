import { OutboundError, type OutboundRequest, type OutboundResponse, send } from '#shared/outbound';

/**
 * What the bridges' platform clients (`slack.ts`, `discord.ts`, `matrix.ts`) share: the outcome of
 * one post to a chat platform, and the call that turns transport errors and refusals into one.
 */

/** A post was taken (`sent`), or not (`failed`: the caller retries it later; `retryAfterSeconds` when the platform said when). */
export type PlatformPostResult =
  | { readonly outcome: 'sent' }
  | { readonly outcome: 'failed'; readonly status?: number; readonly reason: string; readonly retryAfterSeconds?: number };

/** The answer of a post that came back, or the failure of one that did not. */
export type PlatformExchange = { readonly response: OutboundResponse; readonly answer: unknown } | PlatformPostResult;

/**
 * Makes one call through `#shared/outbound` and reads its JSON answer. A network failure, a
 * timeout or a status outside 2xx is a `failed` result (with `Retry-After` when the platform sent
 * one, as Slack and Discord do on 429); a 2xx answer is handed back for the platform's own checks.
 */
export async function exchangeJson(request: OutboundRequest): Promise<PlatformExchange> {
  let response: OutboundResponse;
  try {
    response = await send(request);
  } catch (error) {
    if (!(error instanceof OutboundError)) throw error;
    return { outcome: 'failed', ...(error.status ? { status: error.status } : {}), reason: `${error.code}: ${error.message}` };
  }
  const answer = parseJson(response.body);
  if (response.status < 200 || response.status > 299) {
    const retryAfter = Number(response.headers['retry-after']);
    return {
      outcome: 'failed',
      status: response.status,
      reason: `HTTP ${response.status}${describeError(answer)}`,
      ...(Number.isFinite(retryAfter) && retryAfter >= 0 ? { retryAfterSeconds: retryAfter } : {}),
    };
  }
  return { response, answer };
}

/** The platform's own words on a refusal (Slack's `error`, Discord's `message`, Matrix's `errcode`), shortened. */
function describeError(answer: unknown): string {
  if (typeof answer !== 'object' || answer === null) return '';
  const { error, message, errcode } = answer as Record<string, unknown>;
  const said = [errcode, error, message].find((value) => typeof value === 'string') as string | undefined;
  return said ? `: ${said.slice(0, 200)}` : '';
}

function parseJson(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

export const trimSlash = (url: string) => url.replace(/\/+$/, '');
