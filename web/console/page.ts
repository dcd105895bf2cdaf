import type { ApiError } from '../shared/http';
import type { Call } from './client';

/** What each console page gets: the API, a user token for the routes that want one, and where to draw. */
export interface PageContext {
  readonly call: Call;
  /** The API's base URL, for the routes that take no credential. */
  readonly baseUrl: string;
  readonly userToken: () => Promise<string>;
  readonly root: HTMLElement;
  /** Called when the page is left: timers stop here. */
  onLeave(stop: () => void): void;
}

export const errorText = (error: unknown) =>
  error && typeof error === 'object' && 'code' in error ? `${(error as ApiError).message} (${(error as ApiError).code})` : String(error);
