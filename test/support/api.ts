import { randomBytes } from 'node:crypto';
import { inject } from 'vitest';
import { openEventTap } from './events';

export const runtime = () => inject('runtime');

export interface ApiResponse<T = any> {
  readonly status: number;
  readonly body: T;
  readonly headers: Headers;
}

export interface ApiOptions {
  readonly method?: string;
  readonly body?: unknown;
  /** Raw body, sent as is (for malformed JSON tests). */
  readonly rawBody?: string;
  readonly token?: string;
  readonly apiKey?: string;
  readonly headers?: Record<string, string>;
}

/**
 * A client for one runtime's gateway: real `fetch` over a socket, JSON in and out. `api` below is
 * bound to the shared runtime; tests that start their own (`startLocalProcess`) use this directly.
 */
export function clientOf(baseUrl: string) {
  return async function request<T = any>(path: string, options: ApiOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    if (options.apiKey) headers['x-service-api-key'] = options.apiKey;
    let body = options.rawBody;
    if (options.body !== undefined) body = JSON.stringify(options.body);
    if (body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${baseUrl}${path}`, { method: options.method ?? (body === undefined ? 'GET' : 'POST'), headers, body });
    return readAnswer<T>(response);
  };
}

/** An answer's status, headers and body: parsed JSON, the text when it is not JSON, `undefined` when empty. */
export async function readAnswer<T = any>(response: Response): Promise<ApiResponse<T>> {
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    // Non-JSON bodies stay text; tests that expect JSON fail on their own assertions.
  }
  return { status: response.status, body: parsed as T, headers: response.headers };
}

/** One HTTP request to the shared runtime's gateway. */
export const api = <T = any>(path: string, options: ApiOptions = {}) => clientOf(runtime().baseUrl)<T>(path, options);

export const uniqueId = (prefix: string) => `${prefix}-${randomBytes(5).toString('hex')}`;

export interface TestProject {
  readonly projectId: string;
  readonly apiKey: string;
  readonly signingSecret: string;
  /** A JWT for `userId` in this project. */
  token(userId: string, roles?: string[], expiresIn?: number): Promise<string>;
}

/** A fresh tenant through the operator route, so tests never share data. */
export async function createTestProject(name = 'test'): Promise<TestProject> {
  const created = await api('/platform/projects', {
    body: { name },
    headers: { 'x-service-operator-key': runtime().operatorKey },
  });
  if (created.status !== 201) throw new Error(`project creation failed: ${created.status} ${JSON.stringify(created.body)}`);
  const { projectId, apiKey, signingSecret } = created.body;
  await openEventTap(projectId);
  return {
    projectId,
    apiKey,
    signingSecret,
    async token(userId, roles, expiresIn) {
      const issued = await api('/auth/token', {
        apiKey,
        body: { userId, ...(roles ? { roles } : {}), ...(expiresIn ? { expiresIn } : {}) },
      });
      if (issued.status !== 201) throw new Error(`token failed: ${issued.status} ${JSON.stringify(issued.body)}`);
      return issued.body.token as string;
    },
  };
}

/** Matches the service's timestamps (ISO 8601 in UTC with milliseconds). */
export const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** A fresh user of the project with a token. */
export async function newUser(project: Pick<TestProject, 'token'>, prefix = 'user', roles?: string[]) {
  const userId = uniqueId(prefix);
  return { userId, token: await project.token(userId, roles) };
}

/** A group room owned by a fresh user, with the given plain members. */
export async function newGroupRoom(project: TestProject, members: string[] = []) {
  const owner = await newUser(project, 'owner');
  const roomId = uniqueId('room');
  const created = await api('/rooms', { token: owner.token, body: { id: roomId, type: 'group', members } });
  if (created.status !== 201) throw new Error(`room creation failed: ${created.status}`);
  return { owner, roomId };
}
