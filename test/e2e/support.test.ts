import { beforeAll, describe, expect, it } from 'vitest';
import { replaceCannedResponses } from '#shared/db/canned-responses';
import { api, createTestProject, ISO_TIMESTAMP, newUser, type TestProject, uniqueId } from '../support/api';
import { eventually } from '../support/webhook-receiver';

/**
 * The support desk end to end on the shared runtime: canned responses (shortcut uniqueness, the
 * bound), business hours (unconfigured, validation, the status), tickets from rooms (membership,
 * the transcript reference, one active ticket per room, the state machine, assignees), CSAT
 * surveys (on a solved ticket, on a completed handoff through the `handoff` event's subscriber,
 * answered once), and the GDPR export and erasure of a requester.
 */

let project: TestProject;
let admin: string;
let moderator: { userId: string; token: string };
let customer: { userId: string; token: string };
let other: { userId: string; token: string };

beforeAll(async () => {
  project = await createTestProject('support');
  [admin, moderator, customer, other] = await Promise.all([
    project.token(uniqueId('admin'), ['admin']),
    newUser(project, 'agent', ['moderator']),
    newUser(project, 'customer'),
    newUser(project, 'other'),
  ]);
});

/** A group room of the customer's with one message, the agent as a member. */
async function supportRoom(owner = customer, members: string[] = [moderator.userId]) {
  const roomId = uniqueId('room');
  await api('/rooms', { token: owner.token, body: { id: roomId, type: 'group', members } });
  const posted = await api('/messages', { token: owner.token, body: { roomId, content: 'my order never arrived' } });
  return { roomId, lastMessageId: posted.body.id as number };
}
const openTicket = (token: string, body: Record<string, unknown>) => api('/support/tickets/from-room', { token, body });
const patchTicket = (ticketId: string, body: Record<string, unknown>, token = moderator.token) =>
  api(`/support/tickets/${ticketId}`, { token, method: 'PATCH', body });
const pendingOf = (token: string, roomId: string) => api(`/support/csat/pending?roomId=${roomId}`, { token });

describe('canned responses', () => {
  it('are created, listed by title, changed and deleted by admins, read by members', async () => {
    // Act
    const greeting = await api('/admin/support/canned-responses', {
      token: admin,
      body: { title: 'Greeting', content: 'Hello! How can I help?', shortcut: 'hello', tags: ['intro', 'intro'] },
    });
    const refund = await api('/admin/support/canned-responses', {
      apiKey: project.apiKey,
      body: { title: 'About refunds', content: 'Refunds take 5 days.' },
    });
    const changed = await api(`/admin/support/canned-responses/${refund.body.responseId}`, {
      token: admin,
      method: 'PATCH',
      body: { shortcut: 'refund', tags: ['billing'] },
    });
    const listed = await api('/support/canned-responses', { token: customer.token });

    // Assess
    expect(greeting.status).toBe(201);
    expect(greeting.body).toMatchObject({
      title: 'Greeting',
      shortcut: 'hello',
      tags: ['intro'],
      createdAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(refund.body.shortcut).toBeNull();
    expect(changed.body).toMatchObject({ title: 'About refunds', content: 'Refunds take 5 days.', shortcut: 'refund', tags: ['billing'] });
    expect(listed.body.responses.map((response: any) => response.title)).toEqual(['About refunds', 'Greeting']);

    // Act: delete one
    const deleted = await api(`/admin/support/canned-responses/${greeting.body.responseId}`, { token: admin, method: 'DELETE' });
    const again = await api(`/admin/support/canned-responses/${greeting.body.responseId}`, { token: admin, method: 'DELETE' });
    const after = await api('/support/canned-responses', { token: customer.token });

    // Assess
    expect(deleted.status).toBe(204);
    expect(again).toMatchObject({ status: 404, body: { error: { code: 'canned_response_not_found' } } });
    expect(after.body.responses.map((response: any) => response.responseId)).toEqual([refund.body.responseId]);
  });

  it('keep shortcuts unique in the project: a second create or a rename to a taken one is 409 shortcut_taken', async () => {
    // Prepare
    const fresh = await createTestProject('support-shortcuts');
    await api('/admin/support/canned-responses', { apiKey: fresh.apiKey, body: { title: 'A', content: 'a', shortcut: 'same' } });
    const second = await api('/admin/support/canned-responses', {
      apiKey: fresh.apiKey,
      body: { title: 'B', content: 'b', shortcut: 'other' },
    });

    // Act
    const duplicate = await api('/admin/support/canned-responses', {
      apiKey: fresh.apiKey,
      body: { title: 'C', content: 'c', shortcut: 'same' },
    });
    const renamed = await api(`/admin/support/canned-responses/${second.body.responseId}`, {
      apiKey: fresh.apiKey,
      method: 'PATCH',
      body: { shortcut: 'same' },
    });
    const ownAgain = await api(`/admin/support/canned-responses/${second.body.responseId}`, {
      apiKey: fresh.apiKey,
      method: 'PATCH',
      body: { shortcut: 'other', title: 'B2' },
    });

    // Assess
    expect(duplicate).toMatchObject({ status: 409, body: { error: { code: 'shortcut_taken' } } });
    expect(renamed).toMatchObject({ status: 409, body: { error: { code: 'shortcut_taken' } } });
    expect(ownAgain).toMatchObject({ status: 200, body: { shortcut: 'other', title: 'B2' } });
    expect((await api('/support/canned-responses', { apiKey: fresh.apiKey })).body.responses).toHaveLength(2);
  });

  it('lose none of concurrent creates', async () => {
    // Prepare
    const fresh = await createTestProject('support-concurrent');

    // Act
    const made = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        api('/admin/support/canned-responses', { apiKey: fresh.apiKey, body: { title: `R${index}`, content: 'x' } }),
      ),
    );

    // Assess
    expect(made.map((response) => response.status)).toEqual(Array(6).fill(201));
    expect((await api('/support/canned-responses', { apiKey: fresh.apiKey })).body.responses).toHaveLength(6);
  });

  it('stop at 100 per project (409 canned_responses_full)', async () => {
    // Prepare: 99 stored as the entity stores them
    const fresh = await createTestProject('support-bound');
    const now = new Date().toISOString();
    const stored = Array.from({ length: 99 }, (_, index) => ({
      responseId: `cr_seed${index}`,
      title: `R${index}`,
      content: 'x',
      shortcut: null,
      tags: [],
      createdAt: now,
      updatedAt: now,
    }));
    expect(await replaceCannedResponses(fresh.projectId, 0, stored, { updatedAt: now, updatedBy: 'seed' })).toBe(true);

    // Act
    const hundredth = await api('/admin/support/canned-responses', { apiKey: fresh.apiKey, body: { title: 'the 100th', content: 'x' } });
    const overTheBound = await api('/admin/support/canned-responses', {
      apiKey: fresh.apiKey,
      body: { title: 'one too many', content: 'x' },
    });

    // Assess
    expect(hundredth.status).toBe(201);
    expect(overTheBound).toMatchObject({ status: 409, body: { error: { code: 'canned_responses_full' } } });
    expect((await api('/support/canned-responses', { apiKey: fresh.apiKey })).body.responses).toHaveLength(100);
  });
});

describe('business hours', () => {
  it('are always open while unconfigured', async () => {
    // Act
    const hours = await api('/support/business-hours', { token: customer.token });

    // Assess
    expect(hours.body).toMatchObject({ configured: false, openNow: true, nextOpensAt: null, timezone: 'UTC', holidays: [] });
  });

  it('answer the configuration and the status in the project timezone once set', async () => {
    // Prepare
    const fresh = await createTestProject('support-hours');
    const allDay = [{ open: '00:00', close: '24:00' }];

    // Act: open around the clock every day, then never
    const put = await api('/admin/support/business-hours', {
      apiKey: fresh.apiKey,
      method: 'PUT',
      body: {
        timezone: 'Asia/Kolkata',
        weekly: { monday: allDay, tuesday: allDay, wednesday: allDay, thursday: allDay, friday: allDay, saturday: allDay, sunday: allDay },
        holidays: ['2099-01-01'],
      },
    });
    const read = await api('/support/business-hours', { token: await fresh.token('reader') });
    const closed = await api('/admin/support/business-hours', {
      apiKey: fresh.apiKey,
      method: 'PUT',
      body: { timezone: 'Europe/Berlin', weekly: {} },
    });

    // Assess
    expect(put.status).toBe(200);
    expect(read.body).toMatchObject({
      configured: true,
      timezone: 'Asia/Kolkata',
      openNow: true,
      nextOpensAt: null,
      holidays: ['2099-01-01'],
    });
    expect(read.body.weekly.sunday).toEqual(allDay);
    // Midnight in Kolkata (UTC+05:30) is 18:30 UTC.
    expect(read.body.closesAt).toMatch(/T18:30:00\.000Z$/);
    expect(closed.body).toMatchObject({ configured: true, openNow: false, nextOpensAt: null, closesAt: null, weekly: { monday: [] } });
  });

  it('refuse an unknown timezone, a range that closes before it opens, overlapping ranges and a date that does not exist', async () => {
    // Act
    const answers = await Promise.all(
      [
        { timezone: 'Mars/Olympus', weekly: {} },
        { timezone: 'UTC', weekly: { monday: [{ open: '17:00', close: '09:00' }] } },
        {
          timezone: 'UTC',
          weekly: {
            monday: [
              { open: '09:00', close: '13:00' },
              { open: '12:00', close: '18:00' },
            ],
          },
        },
        { timezone: 'UTC', weekly: {}, holidays: ['2026-02-30'] },
        { timezone: 'UTC', weekly: { funday: [] } },
      ].map((body) => api('/admin/support/business-hours', { token: admin, method: 'PUT', body })),
    );

    // Assess
    expect(answers.map((answer) => answer.status)).toEqual([400, 400, 400, 400, 400]);
    const fields = answers.map((answer) => answer.body.error.details.map((detail: any) => detail.field));
    expect(fields[0]).toContain('body.timezone');
    expect(fields[1]).toContain('body.weekly.monday.0.close');
    expect(fields[2]).toContain('body.weekly.monday.1.open');
    expect(fields[3]).toContain('body.holidays.0');
    expect(fields[4]).toContain('body.weekly');
  });
});

describe('tickets from rooms', () => {
  it('opens a ticket with the transcript reference for a member, and answers the active one again (created: false)', async () => {
    // Prepare
    const { roomId, lastMessageId } = await supportRoom();

    // Act
    const opened = await openTicket(customer.token, { roomId, subject: 'Missing order', priority: 'high' });
    const again = await openTicket(moderator.token, { roomId, subject: 'Another' });

    // Assess
    expect(opened.status).toBe(201);
    expect(opened.body).toMatchObject({
      created: true,
      ticket: {
        ticketId: expect.stringMatching(/^tkt_/),
        roomId,
        subject: 'Missing order',
        priority: 'high',
        status: 'open',
        requesterId: customer.userId,
        assigneeId: null,
        transcript: { roomId, lastMessageId },
        solvedAt: null,
        closedAt: null,
      },
    });
    expect(again).toMatchObject({
      status: 200,
      body: { created: false, ticket: { ticketId: opened.body.ticket.ticketId, subject: 'Missing order' } },
    });
  });

  it('refuses users outside the room (403 not_a_member) and unknown rooms (404)', async () => {
    // Prepare
    const { roomId } = await supportRoom();
    const publicRoom = uniqueId('public');
    await api('/rooms', { token: customer.token, body: { id: publicRoom, type: 'public' } });

    // Act
    const [outsider, publicOutsider, projectAdmin, missing] = await Promise.all([
      openTicket(other.token, { roomId }),
      openTicket(other.token, { roomId: publicRoom }),
      openTicket(admin, { roomId }),
      openTicket(customer.token, { roomId: uniqueId('missing') }),
    ]);

    // Assess
    expect(outsider).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(publicOutsider).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(projectAdmin).toMatchObject({ status: 403, body: { error: { code: 'not_a_member' } } });
    expect(missing).toMatchObject({ status: 404, body: { error: { code: 'room_not_found' } } });
  });

  it('moves along the state machine, asks the requester for CSAT once solved, and frees the room for a new ticket', async () => {
    // Prepare
    const { roomId } = await supportRoom();
    const { ticketId } = (await openTicket(customer.token, { roomId })).body.ticket;

    // Act
    const pending = await patchTicket(ticketId, { status: 'pending', assigneeId: moderator.userId });
    const noSurveyYet = await pendingOf(customer.token, roomId);
    const solved = await patchTicket(ticketId, { status: 'solved' });
    const surveys = await pendingOf(customer.token, roomId);
    const agentSurveys = await pendingOf(moderator.token, roomId);
    const next = await openTicket(customer.token, { roomId, subject: 'Something else' });

    // Assess
    expect(pending.body.ticket).toMatchObject({ status: 'pending', assigneeId: moderator.userId });
    expect(noSurveyYet.body.surveys).toEqual([]);
    expect(solved.body.ticket).toMatchObject({ status: 'solved', solvedAt: expect.stringMatching(ISO_TIMESTAMP) });
    expect(surveys.body.surveys).toEqual([
      expect.objectContaining({ roomId, source: 'ticket', sourceId: ticketId, status: 'pending', userId: customer.userId, score: null }),
    ]);
    expect(agentSurveys.body.surveys).toEqual([]);
    expect(next).toMatchObject({ status: 201, body: { created: true } });

    // Act: reopening the solved ticket while the room has the new one, then after closing the new one
    const refused = await patchTicket(ticketId, { status: 'open' });
    await patchTicket(next.body.ticket.ticketId, { status: 'closed' });
    const reopened = await patchTicket(ticketId, { status: 'open' });
    const solvedAgain = await patchTicket(ticketId, { status: 'solved' });
    const closed = await patchTicket(ticketId, { status: 'closed' });
    const afterClosed = await patchTicket(ticketId, { status: 'open' });

    // Assess
    expect(refused).toMatchObject({ status: 409, body: { error: { code: 'room_has_active_ticket' } } });
    expect(reopened.body.ticket.status).toBe('open');
    expect(solvedAgain.body.ticket.status).toBe('solved');
    expect((await pendingOf(customer.token, roomId)).body.surveys).toHaveLength(1);
    expect(closed.body.ticket).toMatchObject({ status: 'closed', closedAt: expect.stringMatching(ISO_TIMESTAMP) });
    expect(afterClosed).toMatchObject({
      status: 409,
      body: { error: { code: 'ticket_transition_not_allowed', details: { from: 'closed', to: 'open', allowed: [] } } },
    });
  });

  it('assigns only members of the project (or the agent themself), and lists by status and assignee, newest first', async () => {
    // Prepare
    const { roomId: first } = await supportRoom(other, []);
    const { roomId: second } = await supportRoom(other, []);
    const a = (await openTicket(other.token, { roomId: first })).body.ticket.ticketId;
    const b = (await openTicket(other.token, { roomId: second })).body.ticket.ticketId;
    const selfAgent = await newUser(project, 'self-agent', ['moderator']);

    // Act
    const unknown = await patchTicket(a, { assigneeId: uniqueId('nobody') });
    const assigned = await patchTicket(a, { assigneeId: customer.userId });
    const self = await patchTicket(b, { assigneeId: selfAgent.userId }, selfAgent.token);
    const byAssignee = await api(`/support/tickets?assigneeId=${customer.userId}`, { token: moderator.token });
    const openOnes = await api('/support/tickets?status=open&limit=100', { apiKey: project.apiKey });
    const unassigned = await patchTicket(a, { assigneeId: null });

    // Assess
    expect(unknown).toMatchObject({ status: 400, body: { error: { code: 'unknown_assignee' } } });
    expect(assigned.body.ticket.assigneeId).toBe(customer.userId);
    expect(self.body.ticket.assigneeId).toBe(selfAgent.userId);
    expect(byAssignee.body.tickets.map((ticket: any) => ticket.ticketId)).toEqual([a]);
    const ids = openOnes.body.tickets.map((ticket: any) => ticket.ticketId);
    expect(ids.indexOf(b)).toBeLessThan(ids.indexOf(a));
    expect(openOnes.body.tickets.every((ticket: any) => ticket.status === 'open')).toBe(true);
    expect(unassigned.body.ticket.assigneeId).toBeNull();
    expect(await patchTicket('tkt_000000000nothere', { status: 'pending' })).toMatchObject({
      status: 404,
      body: { error: { code: 'ticket_not_found' } },
    });
  });

  it('pages through the tickets with the cursor', async () => {
    // Prepare
    const fresh = await createTestProject('support-pages');
    const requester = await newUser(fresh, 'requester');
    const made: string[] = [];
    for (let index = 0; index < 3; index++) {
      const roomId = uniqueId('room');
      await api('/rooms', { token: requester.token, body: { id: roomId, type: 'group' } });
      made.push((await openTicket(requester.token, { roomId })).body.ticket.ticketId);
    }

    // Act
    const first = await api('/support/tickets?limit=2', { apiKey: fresh.apiKey });
    const second = await api(`/support/tickets?limit=2&cursor=${first.body.nextCursor}`, { apiKey: fresh.apiKey });

    // Assess
    expect([...first.body.tickets, ...second.body.tickets].map((ticket: any) => ticket.ticketId)).toEqual([...made].reverse());
    expect(second.body.nextCursor).toBeNull();
  });
});

describe('CSAT surveys', () => {
  it('are answered once, by their own user only', async () => {
    // Prepare
    const { roomId } = await supportRoom();
    const { ticketId } = (await openTicket(customer.token, { roomId })).body.ticket;
    await patchTicket(ticketId, { status: 'solved' });
    const [survey] = (await pendingOf(customer.token, roomId)).body.surveys;

    // Act
    const byOther = await api(`/support/csat/${survey.surveyId}`, { token: other.token, body: { score: 1 } });
    const answered = await api(`/support/csat/${survey.surveyId}`, {
      token: customer.token,
      body: { score: 5, comment: 'Quick and kind' },
    });
    const twice = await api(`/support/csat/${survey.surveyId}`, { token: customer.token, body: { score: 1 } });
    const left = await pendingOf(customer.token, roomId);

    // Assess
    expect(byOther).toMatchObject({ status: 404, body: { error: { code: 'survey_not_found' } } });
    expect(answered.body.survey).toMatchObject({
      status: 'answered',
      score: 5,
      comment: 'Quick and kind',
      answeredAt: expect.stringMatching(ISO_TIMESTAMP),
    });
    expect(twice).toMatchObject({ status: 409, body: { error: { code: 'survey_answered' } } });
    expect(left.body.surveys).toEqual([]);
  });

  it("are asked of the room's customers when a handoff completes, not of the agent who took it over", async () => {
    // Prepare: the customer's room, with the agent and a second customer
    const second = await newUser(project, 'second-customer');
    const { roomId } = await supportRoom(customer, [moderator.userId, second.userId]);
    const taken = await api(`/rooms/${roomId}/handoff`, { token: moderator.token, method: 'POST', body: {} });
    expect(taken.status).toBe(201);

    // Act
    const completed = await api(`/rooms/${roomId}/handoff`, { token: moderator.token, method: 'PATCH', body: { disposition: 'resolved' } });
    const surveys = await eventually('the handoff CSAT surveys', async () => {
      const [mine, theirs] = await Promise.all([pendingOf(customer.token, roomId), pendingOf(second.token, roomId)]);
      return mine.body.surveys.length > 0 && theirs.body.surveys.length > 0 && [mine.body.surveys, theirs.body.surveys];
    });

    // Assess
    expect(completed.status).toBe(200);
    for (const [survey] of surveys) {
      expect(survey).toMatchObject({ roomId, source: 'handoff', sourceId: taken.body.handoffId, status: 'pending' });
    }
    expect((await pendingOf(moderator.token, roomId)).body.surveys).toEqual([]);
  });
});

describe('GDPR', () => {
  it("exports a requester's tickets and surveys, and erasure leaves the ticket anonymous and the surveys gone", async () => {
    // Prepare: an admin user erases themself (the route acts on the token's subject)
    const requester = await newUser(project, 'leaving', ['admin']);
    const { roomId } = await supportRoom(requester, [moderator.userId]);
    const { ticketId } = (await openTicket(requester.token, { roomId, subject: 'Please call me at 555-0100' })).body.ticket;
    await patchTicket(ticketId, { status: 'solved' });

    // Act
    const exported = await api('/gdpr/export', { token: requester.token });
    const erased = await api('/gdpr/delete', { token: requester.token, method: 'DELETE' });
    const tickets = await api('/support/tickets?limit=100', { apiKey: project.apiKey });

    // Assess
    expect(exported.body.support.ticketsRequested).toEqual([expect.objectContaining({ ticketId, subject: 'Please call me at 555-0100' })]);
    expect(exported.body.support.satisfactionSurveys).toEqual([expect.objectContaining({ sourceId: ticketId, status: 'pending' })]);
    expect(erased.body.status).toBe('done');
    const ticket = tickets.body.tickets.find((candidate: any) => candidate.ticketId === ticketId);
    expect(ticket).toMatchObject({ requesterId: 'erased:user', subject: null, status: 'solved' });
    expect(JSON.stringify(tickets.body)).not.toContain(requester.userId);
  });
});
