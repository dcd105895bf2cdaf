import type { RoomEmitter } from './emitter.js';

const isString = (value: unknown): value is string => typeof value === 'string';

/**
 * Who is in the room, as one WebSocket's frames tell it. Each socket starts from nothing and gets a
 * snapshot (`subscription_succeeded`), so a new connection never shows the last one's members.
 */
export class PresenceTracker {
  private current: string[] = [];
  private count = 0;

  constructor(private readonly events: RoomEmitter) {}

  get members(): readonly string[] {
    return [...this.current];
  }

  get subscriptionCount(): number {
    return this.count;
  }

  /** Applies a presence frame and emits its event; false when `frame` is not about presence. */
  apply(frame: Record<string, unknown>): boolean {
    switch (frame.type) {
      case 'subscription_succeeded':
      case 'presence':
        if (Array.isArray(frame.members)) this.current = frame.members.filter(isString);
        this.countFrom(frame);
        this.events.emit('presence', { members: this.members, subscriptionCount: this.count });
        return true;
      case 'member_joined':
      case 'member_left': {
        if (!isString(frame.userId)) return true;
        const userId = frame.userId;
        this.current = this.current.filter((member) => member !== userId);
        if (frame.type === 'member_joined') this.current.push(userId);
        this.countFrom(frame);
        this.events.emit(frame.type, { userId, subscriptionCount: this.count });
        return true;
      }
      case 'subscription_count':
        this.countFrom(frame);
        this.events.emit('subscription_count', { subscriptionCount: this.count });
        return true;
      default:
        return false;
    }
  }

  private countFrom(frame: Record<string, unknown>): void {
    if (typeof frame.subscriptionCount === 'number') this.count = frame.subscriptionCount;
  }
}
