import { createHash, createHmac } from 'node:crypto';
import { api } from './api';

/** A project's Pusher app as `POST /admin/pusher-app` answers it. */
export interface PusherAppKeys {
  readonly appId: string;
  readonly key: string;
  readonly secret: string;
}

/** Creates (or rotates) the project's Pusher app. */
export async function createPusherApp(apiKey: string): Promise<PusherAppKeys> {
  const created = await api('/admin/pusher-app', { apiKey, method: 'POST' });
  if (created.status !== 201) throw new Error(`pusher app creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  return created.body;
}

/**
 * The query string of a trigger request as Pusher's server libraries sign it, computed here with
 * node:crypto: `auth_*` and `body_md5`, then `auth_signature`, the HMAC-SHA256 of
 * `POST\n<path>\n<sorted params>`.
 */
export function pusherSignedQuery(
  app: Pick<PusherAppKeys, 'key' | 'secret'>,
  path: string,
  body: string,
  options: { timestamp?: number; md5?: string; tamper?: boolean; key?: string } = {},
): string {
  const params: Record<string, string> = {
    auth_key: options.key ?? app.key,
    auth_timestamp: String(options.timestamp ?? Math.floor(Date.now() / 1000)),
    auth_version: '1.0',
    body_md5: options.md5 ?? createHash('md5').update(body).digest('hex'),
  };
  const query = Object.keys(params)
    .sort()
    .map((name) => `${name}=${params[name]}`)
    .join('&');
  let signature = createHmac('sha256', app.secret).update(`POST\n${path}\n${query}`).digest('hex');
  if (options.tamper) signature = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
  return `${query}&auth_signature=${signature}`;
}

/** A signed trigger request to `/apps/<appId>/<endpoint>` with `body` as sent. */
export function sendSignedTrigger(
  app: PusherAppKeys,
  endpoint: 'events' | 'batch_events',
  body: string,
  options: Parameters<typeof pusherSignedQuery>[3] & { appId?: string } = {},
) {
  const path = `/apps/${options.appId ?? app.appId}/${endpoint}`;
  return api(`${path}?${pusherSignedQuery(app, path, body, options)}`, { rawBody: body, headers: { 'content-type': 'application/json' } });
}
