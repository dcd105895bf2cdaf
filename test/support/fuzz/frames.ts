import fc from 'fast-check';
import type { Channel, FrameRoute } from '#wiring';
import type { Frame, RoomSocket } from '../ws';
import { malformedJson, oddString, oddValue, toJsonText } from './arbitraries';
import { type Detail, discoverShape, mutatedObject, repairObject, type Shape } from './discovery';

/**
 * WebSocket frames of the fuzz suite, derived from one entry of the frame table: its `type` (a
 * `client-*` entry stands for every type with that prefix), its channels and (learnt by
 * {@link discoverFrame}) its fields.
 */

export interface FrameCase {
  readonly channel: Channel;
  readonly data: string;
  /** Sent as a binary frame: the gateway hands the handler base64, as API Gateway does. */
  readonly binary: boolean;
  /** The `type` the frame claims, when it claims a string one. */
  readonly type?: string;
  readonly summary: string;
}

/** What the server may answer a frame with; a `client-*` event is answered by its relay to the room's other sockets. */
export const ANSWER_TYPES = new Set(['error', 'ack', 'pong']);

/** Below the 128 KB frame limit with room to spare: bigger frames close the socket (tested on their own). */
export const MAX_FUZZ_FRAME_BYTES = 100_000;

/** A concrete type for a frame-table entry: itself, or for `client-*` a well-formed or odd suffix. */
export function frameTypes(route: FrameRoute): fc.Arbitrary<string> {
  if (!route.type.endsWith('*')) return fc.constant(route.type);
  const prefix = route.type.slice(0, -1);
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(`${prefix}typing`, `${prefix}fuzz.event:1`, `${prefix}a`) },
    { weight: 1, arbitrary: oddString.map((suffix) => `${prefix}${suffix}`) },
  );
}

/** The first concrete type of an entry, for probes. */
export const probeType = (route: FrameRoute) => (route.type.endsWith('*') ? `${route.type.slice(0, -1)}fuzz` : route.type);

/** Frames for one entry: mutated objects of its shape, its type replaced or dropped, non-objects, text that is not JSON, binary frames. */
export function frameCases(
  route: FrameRoute,
  shape: Shape,
  allTypes: readonly string[],
  strings: readonly string[],
  vocabulary: readonly string[],
  seeds: readonly Record<string, unknown>[] = [],
): fc.Arbitrary<FrameCase> {
  const channel = fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...route.channels) },
    { weight: 1, arbitrary: fc.constantFrom<Channel>('room', 'user') },
  );
  const typed = fc
    .tuple(
      mutatedObject(shape, strings, vocabulary, seeds),
      fc.oneof(
        { weight: 8, arbitrary: frameTypes(route) },
        { weight: 1, arbitrary: fc.constantFrom(...allTypes, 'MESSAGE', 'message ', 'client-', 'pong', 'ack', 'error', '') },
        { weight: 1, arbitrary: oddValue(vocabulary) },
        { weight: 1, arbitrary: fc.constant(undefined) },
      ),
    )
    .map(([fields, type]) => {
      // `undefined` drops the type, even one a seed brought.
      const { type: _seeded, ...rest } = fields;
      const frame: Record<string, unknown> = type === undefined ? rest : { ...rest, type };
      return { data: toJsonText(frame), type: typeof frame.type === 'string' ? frame.type : undefined };
    });
  const data = fc.oneof(
    { weight: 8, arbitrary: typed },
    { weight: 1, arbitrary: oddValue(vocabulary).map((value) => ({ data: toJsonText(value), type: undefined })) },
    { weight: 1, arbitrary: malformedJson.map((text) => ({ data: text, type: undefined })) },
  );
  return fc
    .tuple(channel, data, fc.oneof({ weight: 4, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }))
    .filter(([, { data: text }]) => Buffer.byteLength(text) <= MAX_FUZZ_FRAME_BYTES)
    .map(([chosen, { data: text, type }, binary]) => {
      const frame: FrameCase = {
        channel: chosen,
        data: text,
        binary,
        ...(type === undefined ? {} : { type }),
        summary: `${binary ? 'binary' : 'text'} frame on the ${chosen} channel: ${
          text.length > 200 ? `${JSON.stringify(text.slice(0, 160))}… (${text.length} characters)` : JSON.stringify(text)
        }`,
      };
      return Object.defineProperty(frame, fc.toStringMethod, { value: () => frame.summary, enumerable: false });
    });
}

/** Resolves with the first frame matching `predicate` that was not received before the call, or `undefined` after `timeoutMs`. */
export function nextNew(socket: RoomSocket, predicate: (frame: Frame) => boolean, timeoutMs: number): Promise<Frame | undefined> {
  const seen = new Set(socket.frames);
  return socket.next((frame) => !seen.has(frame) && predicate(frame), timeoutMs).catch(() => undefined);
}

/**
 * Sends a frame and waits for what answers it: a frame of {@link ANSWER_TYPES} on the sender, or
 * the relay of a `client-*` event on the observer (another socket in the same room).
 */
export async function sendFrame(
  sender: RoomSocket,
  observer: RoomSocket | undefined,
  frame: FrameCase,
  timeoutMs = 5000,
): Promise<{ readonly answer?: Frame; readonly relayed: boolean }> {
  const answered = nextNew(sender, (received) => ANSWER_TYPES.has(received.type), timeoutMs);
  const relayed = observer
    ? nextNew(observer, (received) => received.type === 'event' && frame.type !== undefined && received.event === frame.type, timeoutMs)
    : Promise.resolve(undefined);
  if (frame.binary) sender.socket.send(Buffer.from(frame.data), { binary: true });
  else sender.send(frame.data);
  const first = await Promise.race([answered.then((answer) => ({ answer, relayed: false })), relayed.then((relay) => ({ relay }))]);
  if ('answer' in first && first.answer) return { answer: first.answer, relayed: false };
  if ('relay' in first && first.relay) return { relayed: true };
  // The first to settle found nothing (it timed out); the other may still have.
  const [answer, relay] = await Promise.all([answered, relayed]);
  return answer ? { answer, relayed: false } : { relayed: relay !== undefined };
}

/**
 * Learns a frame type's fields from the `validation_failed` details of its error frames, as
 * `discoverShape` does for bodies, and frames validation lets through (`repairObject`). Each probe
 * counts in `sent`.
 */
export async function discoverFrame(
  route: FrameRoute,
  socket: RoomSocket,
  observer: RoomSocket,
  options: { vocabulary: readonly string[]; strings: readonly string[]; sent: () => void },
): Promise<{ shape: Shape; seeds: Record<string, unknown>[] }> {
  const type = probeType(route);
  const probe = async (value: Record<string, unknown>) => {
    options.sent();
    const frame = { channel: 'room' as const, data: JSON.stringify(value), binary: false, type, summary: 'probe' };
    const { answer } = await sendFrame(socket, observer, frame);
    const details = answer?.type === 'error' && answer.error?.code === 'validation_failed' ? answer.error.details : undefined;
    return { accepted: !Array.isArray(details), details: Array.isArray(details) ? (details as Detail[]) : [] };
  };
  const shape = await discoverShape(async (value) => (await probe(value)).details, {
    prefix: '',
    vocabulary: options.vocabulary,
    base: { type },
  });
  const seeds: Record<string, unknown>[] = [];
  for (const fields of ['required', 'all'] as const) {
    const seed = await repairObject(shape, probe, { prefix: '', strings: options.strings, fields, base: { type } });
    if (seed && !seeds.some((known) => JSON.stringify(known) === JSON.stringify(seed))) seeds.push(seed);
  }
  return { shape, seeds };
}
