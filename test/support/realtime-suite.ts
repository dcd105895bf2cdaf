import { afterEach, beforeAll, expect } from 'vitest';
import { api, type clientOf, createTestProject, newUser, type TestProject, uniqueId } from './api';
import { connectWelcomed, type RoomSocket, type SocketOptions } from './ws';

/**
 * The frame the realtime suites share: sockets a test opens are closed after it, and users, group
 * or public rooms and welcomed room connections are made in one project, on the shared runtime or
 * on a runtime the suite started itself. Call these at the top of a test file (they register hooks).
 */

/** A user of the suite's project with a token. */
export interface SuiteUser {
  readonly userId: string;
  readonly token: string;
}

/** The runtime a suite's rooms and sockets go to. @default the shared runtime */
export interface SuiteRuntime {
  readonly call: ReturnType<typeof clientOf>;
  readonly ws: SocketOptions;
}

const sharedRuntime = (): SuiteRuntime => ({ call: api, ws: {} });

/**
 * A project created in `beforeAll`, usable as a `TestProject` from the tests on (its fields are read
 * when a test reads them, so the handle can be taken at the top of the file).
 */
export function projectBeforeAll(name: string): TestProject {
  let created: TestProject | undefined;
  beforeAll(async () => {
    created = await createTestProject(name);
  });
  const current = () => {
    if (!created) throw new Error(`project ${name} is used before its beforeAll ran`);
    return created;
  };
  return {
    get projectId() {
      return current().projectId;
    },
    get apiKey() {
      return current().apiKey;
    },
    get signingSecret() {
      return current().signingSecret;
    },
    token: (userId, roles, expiresIn) => current().token(userId, roles, expiresIn),
  };
}

/** Returns `track`, which keeps a socket to close after the test (and hands it back). */
export function trackSockets(): <T extends RoomSocket>(socket: T) => T {
  const open: RoomSocket[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((socket) => socket.close()));
  });
  return (socket) => {
    open.push(socket);
    return socket;
  };
}

/** `track`, and `user`, `room` and `join` in `project` on `runtime`. */
export function realtimeHelpers(project: Pick<TestProject, 'token'>, runtime: () => SuiteRuntime = sharedRuntime) {
  const track = trackSockets();

  /** A fresh user of the project. */
  const user = (prefix?: string, roles?: string[]): Promise<SuiteUser> => newUser(project, prefix, roles);

  /** A room owned by `owner` (a fresh user when not given) with the given plain members. */
  const room = async (type: 'group' | 'public' = 'group', members: string[] = [], owner?: SuiteUser) => {
    const creator = owner ?? (await user('owner'));
    const roomId = uniqueId('room');
    const created = await runtime().call('/rooms', { token: creator.token, body: { id: roomId, type, members } });
    expect(created.status).toBe(201);
    return { owner: creator, roomId };
  };

  /** A tracked room connection with all its opening frames received (`history=0`). */
  const join = async (roomId: string, token: string) => track(await connectWelcomed(roomId, token, { ...runtime().ws, history: 0 }));

  return { track, user, room, join };
}

/** A suite on the shared runtime: its project (created in `beforeAll`) and the helpers in it. */
export function realtimeSuite(name: string) {
  const project = projectBeforeAll(name);
  return { project, ...realtimeHelpers(project) };
}

/** Waits until no frame arrived for a ping's round trip: a `pong` after everything already sent. */
export async function settle(socket: RoomSocket) {
  const before = socket.ofType('pong').length;
  socket.send({ type: 'ping' });
  await socket.next(() => socket.ofType('pong').length > before);
}
