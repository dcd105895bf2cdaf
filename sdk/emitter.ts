import { toChatError } from './errors.js';
import type { RoomClientEvents } from './types.js';

type Listener = (...args: any[]) => void;

/** The listeners `RoomClient.on` registered, by event. */
export class RoomEmitter {
  private readonly listeners = new Map<keyof RoomClientEvents, Set<Listener>>();

  /** Registers `listener`; the returned function unregisters it. */
  on<K extends keyof RoomClientEvents>(event: K, listener: RoomClientEvents[K]): () => void {
    let set = this.listeners.get(event);
    if (!set) {
      set = new Set();
      this.listeners.set(event, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
    };
  }

  emit<K extends keyof RoomClientEvents>(event: K, ...args: Parameters<RoomClientEvents[K]>): void {
    for (const listener of [...(this.listeners.get(event) ?? [])]) {
      try {
        listener(...args);
      } catch (error) {
        // A listener's bug must not break the connection; it is reported as an `error` event instead.
        if (event !== 'error') this.emit('error', toChatError(error, 'listener_failed'));
      }
    }
  }
}
