import { expect } from 'vitest';
import { pngBytes, sendBytes, upload, wavBytes } from '../../support/attachments';
import {
  callerTable,
  describeRoleMatrix,
  EVERY_CALLER,
  NO_API_KEY,
  NOT_A_MEMBER,
  roleMatrixBeforeAll,
} from '../../support/matrices/role-driver';

/**
 * Who may upload, read a link and send a voice message: uploads take any user JWT of the project
 * (never the API key, which is no user); a link takes no credential at all (it is one); a voice
 * message is a message, so whoever may post in the room sends one (its members and guests, project
 * admins and owners) and others are refused as for any message. The matrix is `role-driver.ts`.
 */

const roles = roleMatrixBeforeAll('roles-attachments');
const { tokens, historyOf } = roles;

/** A link the room owner uploaded, made once per call. */
let lastUpload: string | undefined;
const ownersLink = async () => (await upload(tokens.roomOwner, pngBytes(), 'image/png')).body.url as string;

describeRoleMatrix('Attachments', roles, {
  roomRules: [
    {
      route: 'UploadAttachment',
      rule: 'any user JWT of the project, whatever its role or rooms; not the API key',
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: EVERY_CALLER.filter((caller) => caller !== 'apiKey'),
        success: 201,
        refused: NO_API_KEY,
      }),
      async act(auth) {
        const response = await sendBytes('/upload', pngBytes(), { contentType: 'image/png', ...auth });
        lastUpload = response.body?.url;
        return response;
      },
      async check(_room, allowed) {
        expect(lastUpload !== undefined).toBe(allowed);
        if (allowed) expect((await fetch(lastUpload as string, { redirect: 'manual' })).status).toBe(302);
      },
    },
    {
      route: 'GetAttachment',
      rule: 'the link is the credential: every caller gets the redirect, with or without a token',
      expected: callerTable({ callers: EVERY_CALLER, allowed: EVERY_CALLER, success: 302 }),
      async act(auth) {
        const response = await fetch(await ownersLink(), {
          redirect: 'manual',
          headers: {
            ...(auth.token ? { authorization: `Bearer ${auth.token}` } : {}),
            ...(auth.apiKey ? { 'x-service-api-key': auth.apiKey } : {}),
          },
        });
        return { status: response.status, body: undefined, headers: response.headers };
      },
      check: async () => undefined,
    },
    {
      route: 'SendVoiceMessage',
      rule: "as any message: the room's members and guests, and the project's admins and owners; not the API key",
      expected: callerTable({
        callers: EVERY_CALLER,
        allowed: ['guest', 'member', 'roomOwner', 'moderator', 'admin', 'owner'],
        success: 201,
        refused: NOT_A_MEMBER,
        except: { apiKey: NO_API_KEY },
      }),
      act: (auth, { roomId }) => sendBytes(`/messages/voice?roomId=${roomId}`, wavBytes(0.1), { contentType: 'audio/wav', ...auth }),
      check: async ({ roomId }, allowed) => expect(await historyOf(roomId)).toHaveLength(allowed ? 1 : 0),
    },
  ],
});
