import { beforeAll, expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import { describeTenantMatrix, expectAllNotFound, tenantsBeforeAll } from '../../support/matrices/tenant-driver';

/**
 * Project A against project B on the support desk: B's canned responses, hours, tickets and the
 * shared user's surveys in B are out of reach of A's admin (whose user id B has too) and A's API
 * key: ids of B's answer 404, lists hold only A's. The matrix is `tenant-driver.ts`.
 */

const tenants = tenantsBeforeAll();
let bResponseId: string;
let bTicketId: string;
let bSurveyId: string;

beforeAll(async () => {
  const { b, bMember, bRoomId } = tenants();
  bResponseId = (
    await api('/admin/support/canned-responses', { apiKey: b.apiKey, body: { title: 'B only', content: 'b', shortcut: 'bee' } })
  ).body.responseId;
  await api('/admin/support/business-hours', { apiKey: b.apiKey, method: 'PUT', body: { timezone: 'Europe/Berlin', weekly: {} } });
  // A solved ticket of the shared user's in B leaves a pending survey; a second room holds an open ticket.
  const solved = (await api('/support/tickets/from-room', { token: bMember, body: { roomId: bRoomId } })).body.ticket.ticketId;
  await api(`/support/tickets/${solved}`, { apiKey: b.apiKey, method: 'PATCH', body: { status: 'solved' } });
  bSurveyId = (await api(`/support/csat/pending?roomId=${bRoomId}`, { token: bMember })).body.surveys[0].surveyId;
  bTicketId = (await api('/support/tickets/from-room', { token: bMember, body: { roomId: bRoomId } })).body.ticket.ticketId;
});

const bCanned = async () => (await api('/support/canned-responses', { apiKey: tenants().b.apiKey })).body.responses;
const bTickets = async () => (await api('/support/tickets?limit=100', { apiKey: tenants().b.apiKey })).body.tickets;

describeTenantMatrix('Support', tenants, {
  async ListCannedResponses({ aCallers }) {
    for (const { auth } of aCallers()) {
      const listed = await api('/support/canned-responses', auth);
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain(bResponseId);
    }
  },
  async CreateCannedResponse({ a }) {
    const before = await bCanned();
    // The shortcut is B's: shortcuts are unique within a project only.
    const made = await api('/admin/support/canned-responses', {
      apiKey: a.apiKey,
      body: { title: uniqueId('a'), content: 'a', shortcut: 'bee' },
    });
    expect(made.status).toBe(201);
    expect(await bCanned()).toEqual(before);
  },
  async UpdateCannedResponse({ aCallers }) {
    const before = await bCanned();
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({
        label: who,
        call: () => api(`/admin/support/canned-responses/${bResponseId}`, { ...auth, method: 'PATCH', body: { content: 'taken' } }),
      })),
      'canned_response_not_found',
    );
    expect(await bCanned()).toEqual(before);
  },
  async DeleteCannedResponse({ aCallers }) {
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({
        label: who,
        call: () => api(`/admin/support/canned-responses/${bResponseId}`, { ...auth, method: 'DELETE' }),
      })),
      'canned_response_not_found',
    );
    expect((await bCanned()).map((entry: any) => entry.responseId)).toContain(bResponseId);
  },
  async GetBusinessHours({ aCallers }) {
    for (const { auth } of aCallers()) {
      const read = await api('/support/business-hours', auth);
      expect(read.body).toMatchObject({ configured: false, timezone: 'UTC' });
    }
  },
  async PutBusinessHours({ a, b }) {
    await api('/admin/support/business-hours', { apiKey: a.apiKey, method: 'PUT', body: { timezone: 'Asia/Tokyo', weekly: {} } });
    expect((await api('/support/business-hours', { apiKey: b.apiKey })).body.timezone).toBe('Europe/Berlin');
  },
  async CreateTicketFromRoom({ aAdmin, aMember, bRooms }) {
    const before = await bTickets();
    await expectAllNotFound(
      [aAdmin, aMember].flatMap((token, index) =>
        bRooms().map((roomId) => ({
          label: `${index} ${roomId}`,
          call: () => api('/support/tickets/from-room', { token, body: { roomId } }),
        })),
      ),
    );
    expect(await bTickets()).toEqual(before);
  },
  async ListTickets({ aCallers }) {
    for (const { auth } of aCallers()) {
      const listed = await api('/support/tickets?limit=100', auth);
      expect(listed.status).toBe(200);
      expect(JSON.stringify(listed.body)).not.toContain(bTicketId);
    }
  },
  async UpdateTicket({ aCallers }) {
    await expectAllNotFound(
      aCallers().map(({ who, auth }) => ({
        label: who,
        call: () => api(`/support/tickets/${bTicketId}`, { ...auth, method: 'PATCH', body: { status: 'closed' } }),
      })),
      'ticket_not_found',
    );
    expect((await bTickets()).find((ticket: any) => ticket.ticketId === bTicketId).status).toBe('open');
  },
  async ListPendingCsat({ aUsers, bRoomId }) {
    for (const { token } of aUsers()) {
      const pending = await api(`/support/csat/pending?roomId=${bRoomId}`, { token });
      expect(pending).toMatchObject({ status: 200, body: { surveys: [] } });
    }
  },
  async AnswerCsat({ aUsers, bMember, bRoomId }) {
    await expectAllNotFound(
      aUsers().map(({ who, token }) => ({ label: who, call: () => api(`/support/csat/${bSurveyId}`, { token, body: { score: 1 } }) })),
      'survey_not_found',
    );
    expect((await api(`/support/csat/pending?roomId=${bRoomId}`, { token: bMember })).body.surveys).toEqual([
      expect.objectContaining({ surveyId: bSurveyId, status: 'pending' }),
    ]);
  },
});
