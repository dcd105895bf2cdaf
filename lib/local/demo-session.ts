/**
 * How a visitor of the demo page (`/` on the local runtime) gets a user token without an API key in
 * the browser: the runtime mints it itself for its demo project, the one `npm start` creates and
 * prints. Local only: no route of the wiring table, so nothing of it is deployed.
 */
import type { ErrorBody } from '#shared/error-codes';
import * as z from '#shared/schema';

/** The project `npm start` creates on first start and the demo page signs its visitors into. */
export const DEMO_PROJECT_ID = 'demo';
/** Demo tokens last two hours: long enough for an afternoon of clicking, short enough to be a demo's. */
const DEMO_TOKEN_SECONDS = 2 * 60 * 60;

/** The visitor's name is their user id: the id rule (docs/api.md, Authentication), kept short for the page. */
export const demoSessionRequest = z.strictObject({
  name: z.string().check(z.regex(/^[A-Za-z0-9_.-]{1,32}$/, 'must be 1-32 letters, digits, _ . or -')),
});

export interface DemoSession {
  readonly projectId: string;
  readonly userId: string;
  readonly token: string;
  readonly expiresAt: string;
}

let demoProjectReady: Promise<void> | undefined;

/**
 * A member token for the visitor's `name` in the demo project (`201`), or `400` for a name that is no user id. A runtime started without `npm start` (the test
 * suites') has no demo project yet: the first session creates it. Domain modules load on first use,
 * after the runtime has set the handlers' settings (they read them when imported).
 */
export async function startDemoSession(body: unknown): Promise<{ status: number; body: DemoSession | { error: ErrorBody } }> {
  const { parsePart } = await import('#edge/middlewares/validation');
  const { errorAnswer } = await import('#shared/errors');
  let name: string;
  try {
    ({ name } = parsePart(demoSessionRequest, body, 'body'));
  } catch (error) {
    const refused = errorAnswer(error);
    return { status: refused.status, body: refused.body };
  }
  demoProjectReady ??= ensureDemoProject().catch((error) => {
    demoProjectReady = undefined;
    throw error;
  });
  await demoProjectReady;
  const { issueToken } = await import('#domain/auth/sessions');
  const issued = await issueToken(DEMO_PROJECT_ID, { userId: name, roles: ['member'], expiresIn: DEMO_TOKEN_SECONDS });
  return { status: 201, body: { projectId: DEMO_PROJECT_ID, userId: name, ...issued } };
}

async function ensureDemoProject(): Promise<void> {
  const { createProject, projectExists } = await import('#domain/projects/projects');
  if (await projectExists(DEMO_PROJECT_ID)) return;
  const { ConflictError } = await import('#shared/errors');
  try {
    await createProject({ name: 'Demo', projectId: DEMO_PROJECT_ID });
  } catch (error) {
    // `npm start` creating it at the same moment is as good as creating it here.
    if (!(error instanceof ConflictError)) throw error;
  }
}
