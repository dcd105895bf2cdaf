import { expect } from 'vitest';
import { api, uniqueId } from '../../support/api';
import {
  callerTable,
  describeRoleMatrix,
  EVERY_CALLER,
  NO_API_KEY,
  NOT_A_MEMBER,
  roleMatrixBeforeAll,
} from '../../support/matrices/role-driver';

/**
 * Who may run the support desk: members and above read canned responses, admins write them and
 * the business hours, moderators and above (agents) list and update tickets; a ticket is opened
 * by a member of its room, whatever their project role, never by the API key. The matrix is `role-driver.ts`.
 */

const roles = roleMatrixBeforeAll('roles-support');
const { project, tokens, roomOfEveryRole } = roles;

const cannedOf = async () => (await api('/support/canned-responses', { apiKey: project.apiKey })).body.responses as any[];
const newCanned = async () =>
  (await api('/admin/support/canned-responses', { apiKey: project.apiKey, body: { title: uniqueId('t'), content: 'x' } })).body
    .responseId as string;
const ticketOf = async (ticketId: string) =>
  ((await api('/support/tickets?limit=100', { apiKey: project.apiKey })).body.tickets as any[]).find(
    (ticket) => ticket.ticketId === ticketId,
  );
/** A ticket the room's member opened in a room of every role. */
async function newTicket() {
  const roomId = await roomOfEveryRole();
  return (await api('/support/tickets/from-room', { token: tokens.member, body: { roomId } })).body.ticket.ticketId as string;
}

describeRoleMatrix('Support', roles, {
  minRole: {
    ListCannedResponses: {
      minRole: 'member',
      success: 200,
      async act(auth) {
        const responseId = await newCanned();
        const response = await api('/support/canned-responses', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.responses.map((entry: any) => entry.responseId)).toContain(responseId);
            else expect(response.body.responses).toBeUndefined();
          },
        };
      },
    },
    CreateCannedResponse: {
      minRole: 'admin',
      success: 201,
      async act(auth) {
        const title = uniqueId('title');
        const response = await api('/admin/support/canned-responses', { ...auth, body: { title, content: 'x' } });
        return { ...response, check: async (allowed) => expect((await cannedOf()).some((entry) => entry.title === title)).toBe(allowed) };
      },
    },
    UpdateCannedResponse: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const responseId = await newCanned();
        const response = await api(`/admin/support/canned-responses/${responseId}`, {
          ...auth,
          method: 'PATCH',
          body: { content: 'changed' },
        });
        return {
          ...response,
          check: async (allowed) =>
            expect((await cannedOf()).find((entry) => entry.responseId === responseId)?.content).toBe(allowed ? 'changed' : 'x'),
        };
      },
    },
    DeleteCannedResponse: {
      minRole: 'admin',
      success: 204,
      async act(auth) {
        const responseId = await newCanned();
        const response = await api(`/admin/support/canned-responses/${responseId}`, { ...auth, method: 'DELETE' });
        return {
          ...response,
          check: async (allowed) => expect((await cannedOf()).some((entry) => entry.responseId === responseId)).toBe(!allowed),
        };
      },
    },
    PutBusinessHours: {
      minRole: 'admin',
      success: 200,
      async act(auth) {
        const holiday = `2099-01-${String(1 + Math.floor(Math.random() * 28)).padStart(2, '0')}`;
        const before = (await api('/support/business-hours', { apiKey: project.apiKey })).body;
        const response = await api('/admin/support/business-hours', {
          ...auth,
          method: 'PUT',
          body: { timezone: 'UTC', weekly: {}, holidays: [holiday] },
        });
        return {
          ...response,
          check: async (allowed) => {
            const after = (await api('/support/business-hours', { apiKey: project.apiKey })).body;
            if (allowed) expect(after.holidays).toEqual([holiday]);
            else expect(after.holidays).toEqual(before.holidays);
          },
        };
      },
    },
    ListTickets: {
      minRole: 'moderator',
      success: 200,
      async act(auth) {
        const ticketId = await newTicket();
        const response = await api('/support/tickets?limit=100', auth);
        return {
          ...response,
          check: async (allowed) => {
            if (allowed) expect(response.body.tickets.map((ticket: any) => ticket.ticketId)).toContain(ticketId);
            else expect(response.body.tickets).toBeUndefined();
          },
        };
      },
    },
    UpdateTicket: {
      minRole: 'moderator',
      success: 200,
      async act(auth) {
        const ticketId = await newTicket();
        const response = await api(`/support/tickets/${ticketId}`, { ...auth, method: 'PATCH', body: { status: 'pending' } });
        return { ...response, check: async (allowed) => expect((await ticketOf(ticketId)).status).toBe(allowed ? 'pending' : 'open') };
      },
    },
  },
  roomRules: [
    {
      route: 'CreateTicketFromRoom',
      rule: 'members of the room, guests included, with a user JWT (project admins outside it are refused); the route takes no API key',
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ['guest', 'member', 'roomOwner', 'moderator'],
        success: 201,
        refused: NOT_A_MEMBER,
        except: { apiKey: NO_API_KEY },
      }),
      act: (auth, { roomId }) => api('/support/tickets/from-room', { ...auth, body: { roomId } }),
      check: async ({ roomId }, allowed) => {
        const tickets = (await api('/support/tickets?limit=100', { apiKey: project.apiKey })).body.tickets as any[];
        expect(tickets.filter((ticket) => ticket.roomId === roomId)).toHaveLength(allowed ? 1 : 0);
      },
    },
  ],
});
