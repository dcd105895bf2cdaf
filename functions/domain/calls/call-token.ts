import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { accessRoom } from '#domain/rooms/rooms';
import type { UserPrincipal } from '#shared/auth';
import { boundIfSet } from '#shared/bindings';
import { config } from '#shared/config';
import { ForbiddenError } from '#shared/errors';
import { secretValue } from '#shared/secrets';

/**
 * Call tokens for a LiveKit-compatible server: an HS256 JWT signed with the server's API secret,
 * issued by its API key (`iss`), for the calling user (`sub`, the identity), valid from now for
 * `CALLS_TOKEN_TTL_SECONDS`, with the grant to join the room's call (`video.roomJoin`). A room's
 * guests listen and watch but do not publish. Without the call-server settings the answer is a
 * stub marked `stub: true`, which no call server accepts: clients can be built and tested before a
 * server exists.
 */

export interface CallToken {
  readonly token: string;
  /** Where the client connects (`CALLS_SERVER_URL`); `null` for a stub. */
  readonly url: string | null;
  readonly room: string;
  readonly identity: string;
  readonly expiresAt: string;
  readonly stub: boolean;
  readonly grant: { readonly canPublish: boolean; readonly canSubscribe: boolean; readonly canPublishData: boolean };
}

/** The call's room name on the call server: project and room, so two projects' rooms of one id never share a call. */
export const callRoomName = (projectId: string, roomId: string) => `${projectId}:${roomId}`;

interface CallServer {
  readonly url: string;
  readonly apiKey: string;
  readonly apiSecret: string;
}

/** The call server when all three settings are there; a partial setup is no setup (the stub says so). */
async function callServer(): Promise<CallServer | undefined> {
  const url = config.CALLS_SERVER_URL;
  const apiKey = config.CALLS_API_KEY;
  if (!url || !apiKey || !boundIfSet('secret:calls-secret')) return undefined;
  const apiSecret = await secretValue('calls-secret');
  return apiSecret ? { url, apiKey, apiSecret } : undefined;
}

/** `POST /admin/calls/token`: for members of the room only (404 for an unknown room, 403 `not_a_member`). */
export async function issueCallToken(user: UserPrincipal, roomId: string, now = Date.now()): Promise<CallToken> {
  const { membership } = await accessRoom(user, roomId, { join: false });
  if (!membership) throw new ForbiddenError('You are not a member of this room', 'not_a_member');

  const room = callRoomName(user.projectId, roomId);
  const identity = user.userId;
  const issuedAt = Math.floor(now / 1000);
  const expiresAt = issuedAt + config.CALLS_TOKEN_TTL_SECONDS;
  const canPublish = membership.role !== 'guest';
  const grant = { canPublish, canSubscribe: true, canPublishData: canPublish };
  const server = await callServer();
  if (!server) {
    return {
      token: `stub_${randomBytes(18).toString('base64url')}`,
      url: null,
      room,
      identity,
      expiresAt: new Date(expiresAt * 1000).toISOString(),
      stub: true,
      grant,
    };
  }
  const token = await new SignJWT({ name: identity, video: { room, roomJoin: true, ...grant } })
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(server.apiKey)
    .setSubject(identity)
    .setJti(randomBytes(12).toString('base64url'))
    .setNotBefore(issuedAt)
    .setExpirationTime(expiresAt)
    .sign(new TextEncoder().encode(server.apiSecret));
  return { token, url: server.url, room, identity, expiresAt: new Date(expiresAt * 1000).toISOString(), stub: false, grant };
}
