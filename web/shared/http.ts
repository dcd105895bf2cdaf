/** The service's JSON answers for the pages: the body, or an `ApiError` with its `{ error: { code, message } }`. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export interface JsonRequest {
  readonly method?: string;
  readonly body?: unknown;
  readonly headers?: Record<string, string>;
}

export async function requestJson<T>(url: string, request: JsonRequest = {}): Promise<T> {
  const headers: Record<string, string> = { ...request.headers };
  if (request.body !== undefined) headers['content-type'] = 'application/json';
  let response: Response;
  try {
    response = await fetch(url, {
      // The pages show what the service holds now; and a cached same-origin answer (no CORS headers)
      // must not stand in for a cross-origin one (the console hosted elsewhere).
      cache: 'no-store',
      method: request.method ?? (request.body === undefined ? 'GET' : 'POST'),
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
    });
  } catch {
    throw new ApiError(0, 'network_error', `Could not reach ${new URL(url).origin}`);
  }
  const text = await response.text();
  let body: any;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    body = undefined;
  }
  if (!response.ok) {
    throw new ApiError(response.status, body?.error?.code ?? 'http_error', body?.error?.message ?? `HTTP ${response.status}`);
  }
  return body as T;
}
