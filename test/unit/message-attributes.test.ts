import { describe, expect, it } from 'vitest';
import { roomFlagsOf } from '../../functions/domain/events/message-attributes';
import type { RoomItem } from '../../functions/shared/db/room';
import { EVENT_FILTER_ATTRIBUTES } from '../../functions/wiring/event-types';

const room = (fields: Partial<RoomItem>): RoomItem => ({
  pk: 'P#p#ROOM#r',
  sk: 'ROOM',
  projectId: 'p',
  roomId: 'r',
  type: 'group',
  e2eEnabled: false,
  e2eKey: 'k',
  createdBy: 'u',
  createdAt: '2026-11-28T00:00:00.000Z',
  updatedAt: '2026-11-28T00:00:00.000Z',
  ...fields,
});

describe('roomFlagsOf', () => {
  it('copies no push or watcher flag from a room created with its flags kept and none set', () => {
    expect(roomFlagsOf(room({ wakeFlagsKept: true }))).toEqual({});
  });

  it('copies the flags a room created with its flags kept has set', () => {
    expect(roomFlagsOf(room({ wakeFlagsKept: true, pushTargets: true, type: 'dm', bridgeCount: 1 }))).toEqual({
      pushTargets: true,
      dm: true,
      bridged: true,
    });
  });

  it('takes a room older than the flags to have push targets and watchers, so an upgrade misses no push or watcher', () => {
    expect(roomFlagsOf(room({}))).toEqual({ pushTargets: true, watched: true });
  });
});

describe('the event topic message attributes', () => {
  it('stay within the 10 that SNS delivers to an SQS subscription: type, project, trace id and every filter attribute', () => {
    // More than 10 and SNS drops the message for raw-delivery SQS subscriptions without a word.
    expect(3 + EVENT_FILTER_ATTRIBUTES.length).toBeLessThanOrEqual(10);
  });
});
