import type { IncomingMessage, ServerResponse } from 'node:http';
import type { ErrorBody } from '#shared/error-codes';
import { schedules } from '#wiring';
import { readBody, sendJson } from './http-replies';

/**
 * The gateway's local-only doors (never deployed): what CloudWatch would show, the fan-out switch,
 * the schedule trigger, and the demo page's sign-in (`POST /_local/demo/session`).
 */
export interface LocalControls {
  /** Served at `GET /_local/stats`. */
  readonly localStats?: () => unknown;
  /** Served at `POST /_local/fan-out` with `{ "running": false | true }`, for outage tests. */
  readonly fanOutSwitch?: FanOutSwitch;
  /** Served at `POST /_local/schedules/<scheduleId>`: runs a schedule of the wiring table now and answers its outcome. */
  readonly scheduleTrigger?: (scheduleId: string) => Promise<unknown>;
  /** Served at `POST /_local/demo/session` with `{ "name" }`: a user token of the demo project for the demo page. */
  readonly demoSession?: (body: unknown) => Promise<{ status: number; body: unknown }>;
}

export interface FanOutSwitch {
  stop(): Promise<void>;
  start(): Promise<void>;
  readonly running: boolean;
}

/**
 * Answers `GET /health` while the runtime is starting and the local-only doors; false when the
 * request is none of those and goes on to the routes (a ready `/health` is a route of its own).
 */
export async function answerLocalControl(
  request: IncomingMessage,
  response: ServerResponse,
  target: { readonly method: string; readonly pathname: string; readonly ready: boolean },
  controls: LocalControls,
): Promise<boolean> {
  const { method, pathname } = target;
  // Setup (the demo project, its key) runs after the port opens; a probe must not see it half done.
  if (!target.ready && pathname === '/health' && method === 'GET') {
    sendJson(response, 503, { status: 'starting', time: new Date().toISOString() }, { 'retry-after': '1' });
    return true;
  }
  if (pathname === '/_local/stats' && method === 'GET' && controls.localStats) {
    sendJson(response, 200, controls.localStats());
    return true;
  }
  const schedule = /^\/_local\/schedules\/([A-Za-z0-9]+)$/.exec(pathname)?.[1];
  if (schedule !== undefined && method === 'POST' && controls.scheduleTrigger) {
    if (!schedules.some((entry) => entry.id === schedule)) {
      sendJson(response, 404, {
        error: { code: 'not_found', message: `No schedule ${schedule} in functions/wiring/` } satisfies ErrorBody,
      });
      return true;
    }
    sendJson(response, 200, { scheduleId: schedule, outcome: await controls.scheduleTrigger(schedule) });
    return true;
  }
  if (pathname === '/_local/demo/session' && method === 'POST' && controls.demoSession) {
    const answer = await controls.demoSession(await jsonBody(request));
    sendJson(response, answer.status, answer.body);
    return true;
  }
  if (pathname === '/_local/fan-out' && method === 'POST' && controls.fanOutSwitch) {
    await switchFanOut(request, response, controls.fanOutSwitch);
    return true;
  }
  return false;
}

/** The body as JSON; `undefined` when it is too large or no JSON, which each door's schema then refuses. */
async function jsonBody(request: IncomingMessage): Promise<unknown> {
  const body = await readBody(request);
  if (body === 'too_large') return undefined;
  try {
    return JSON.parse(body.toString('utf8') || '{}');
  } catch {
    return undefined;
  }
}

async function switchFanOut(request: IncomingMessage, response: ServerResponse, fanOut: FanOutSwitch): Promise<void> {
  const running = ((await jsonBody(request)) as { running?: unknown } | undefined)?.running;
  if (typeof running !== 'boolean') {
    return sendJson(response, 400, { error: { code: 'validation_failed', message: 'Send {"running": true|false}' } satisfies ErrorBody });
  }
  await (running ? fanOut.start() : fanOut.stop());
  sendJson(response, 200, { running: fanOut.running });
}
