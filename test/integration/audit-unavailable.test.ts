import { randomUUID } from 'node:crypto';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { dynamo } from '#shared/db/client';
import { handler } from '../../functions/http/flags/set-project-feature-flags';
import { api, createTestProject, type TestProject, uniqueId } from '../support/api';
import { invokeRoute } from '../support/in-process-route';

/**
 * The audit write's failure policy, on the real handler module of `PUT /admin/feature-flags` in
 * this process against the shared runtime's table, with the DynamoDB client refusing the audit
 * partition's puts: a success whose event cannot be written after its attempts answers 500
 * `audit_unavailable`; a write that fails once and then succeeds leaves one event; a 403 stands
 * whatever happens to its event.
 */

let project: TestProject;
let failing: string | undefined;
afterEach(() => {
  if (failing) dynamo.middlewareStack.remove(failing);
  failing = undefined;
});

beforeAll(async () => {
  project = await createTestProject('audit-unavailable');
});

/** Refuses the first `times` puts into an audit partition (every one by default); answers how many were tried. */
function failAuditPuts(times = Number.POSITIVE_INFINITY) {
  const tried = { count: 0 };
  failing = `fail-audit-${randomUUID()}`;
  dynamo.middlewareStack.add(
    (next) => async (args) => {
      // Marshalled by the build step: the item of a PutItem as DynamoDB reads it.
      const pk = (args.input as { Item?: { pk?: { S?: string } } }).Item?.pk?.S;
      if (pk?.endsWith('#AUDIT')) {
        tried.count++;
        if (tried.count <= times) throw Object.assign(new Error('injected: the audit put failed'), { name: 'InternalServerError' });
      }
      return next(args);
    },
    { step: 'build', name: failing },
  );
  return tried;
}

const setFlags = (headers: Record<string, string>, overrides: Record<string, boolean>) =>
  invokeRoute(handler, 'SetProjectFeatureFlags', { headers, body: { overrides } });

const eventsWith = async (traceId: string) =>
  ((await api('/admin/audit/events?limit=100', { apiKey: project.apiKey })).body.events as { traceId: string }[]).filter(
    (event) => event.traceId === traceId,
  );

describe('an audited route whose audit event cannot be written', () => {
  it('answers 500 audit_unavailable after three attempts, with no event', async () => {
    // Prepare
    const traceId = `audit-unavailable-${uniqueId('t')}`;
    const tried = failAuditPuts();

    // Act
    const answer = await setFlags({ 'x-service-api-key': project.apiKey, 'x-trace-id': traceId }, { voice_messages: false });

    // Assess
    expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 500, code: 'audit_unavailable' });
    expect(tried.count).toBe(3);
    expect(await eventsWith(traceId)).toEqual([]);
  });

  it('answers the success when a later attempt writes it, with exactly one event', async () => {
    // Prepare
    const traceId = `audit-retried-${uniqueId('t')}`;
    const tried = failAuditPuts(1);

    // Act
    const answer = await setFlags({ 'x-service-api-key': project.apiKey, 'x-trace-id': traceId }, { voice_messages: true });

    // Assess
    expect(answer.status).toBe(200);
    expect(tried.count).toBe(2);
    expect(await eventsWith(traceId)).toEqual([expect.objectContaining({ action: 'flags.set', outcome: 'succeeded' })]);
  });

  it('keeps a 403 a 403 when its denied event cannot be written', async () => {
    // Prepare
    const member = await project.token(uniqueId('member'));
    failAuditPuts();

    // Act
    const answer = await setFlags({ authorization: `Bearer ${member}` }, { voice_messages: false });

    // Assess
    expect({ status: answer.status, code: answer.body?.error?.code }).toEqual({ status: 403, code: 'forbidden' });
  });
});
