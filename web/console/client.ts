/**
 * The console's one way to the service: the public API at `baseUrl`, signed with the project's API
 * key (`X-Service-Api-Key`) or an admin's token (`Authorization: Bearer`).
 */
import { type JsonRequest, requestJson } from '../shared/http';

export interface ConsoleSession {
  readonly baseUrl: string;
  /** An API key begins `ck_`; anything else is taken for a user token. */
  readonly credential: string;
}

export type Call = <T>(path: string, request?: JsonRequest) => Promise<T>;

export const isApiKey = (credential: string) => credential.startsWith('ck_');

export function consoleClient(session: ConsoleSession): { call: Call; userToken: () => Promise<string> } {
  const credentialHeader: Record<string, string> = isApiKey(session.credential)
    ? { 'x-service-api-key': session.credential }
    : { authorization: `Bearer ${session.credential}` };
  const call: Call = (path, request = {}) =>
    requestJson(`${session.baseUrl}${path}`, { ...request, headers: { ...credentialHeader, ...request.headers } });
  let minted: { token: string; renewAt: number } | undefined;
  return {
    call,
    /**
     * A user token for the routes an API key cannot call (the public room directory): the admin's
     * own, or one the key mints for the user `console` through `POST /auth/token`.
     */
    async userToken() {
      if (!isApiKey(session.credential)) return session.credential;
      if (!minted || Date.now() > minted.renewAt) {
        const issued = await call<{ token: string }>('/auth/token', { body: { userId: 'console', roles: ['admin'], expiresIn: 3600 } });
        minted = { token: issued.token, renewAt: Date.now() + 50 * 60 * 1000 };
      }
      return minted.token;
    },
  };
}

/** Kept in sessionStorage, never localStorage: it survives a reload but not the tab, and no other tab or later visit sees it. */
const STORAGE_KEY = 'chat-console-session';

export function storedSession(): ConsoleSession | undefined {
  try {
    const stored = JSON.parse(sessionStorage.getItem(STORAGE_KEY) ?? 'null') as ConsoleSession | null;
    return stored && typeof stored.baseUrl === 'string' && typeof stored.credential === 'string' ? stored : undefined;
  } catch {
    return undefined;
  }
}

export function storeSession(session: ConsoleSession | undefined): void {
  if (session) sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
  else sessionStorage.removeItem(STORAGE_KEY);
}
