import { AsyncLocalStorage } from 'node:async_hooks';
import { traceIdOf } from '#shared/trace-id';

/** What the current invocation (or the record of a batch being handled) is about. */
interface RequestContext {
  /** Cleared when the invocation ends (see {@link leaveTraceId}). */
  traceId: string | undefined;
}

const storage = new AsyncLocalStorage<RequestContext>();

/**
 * The trace id of the request, record or task being handled, `undefined` outside any. Domain code
 * reads it here instead of taking it as a parameter through every call: the outbox, the queues,
 * the retry schedule and webhook deliveries write it beside what they carry on.
 */
export const currentTraceId = (): string | undefined => storage.getStore()?.traceId;

/**
 * A Lambda handler that runs in a request context of its own, empty until the trace-id middleware
 * fills it in: a value set inside a middleware step does not reliably flow back out to the steps
 * and handler that run after it (each step is awaited), where one object made current around the
 * whole invocation is seen by all of them, and by nothing outside it.
 */
export function inRequestContext<A extends unknown[], R>(handler: (...args: A) => R): (...args: A) => R {
  return (...args) => storage.run({ traceId: undefined }, () => handler(...args));
}

/** Makes `traceId` current for the rest of this invocation: what the trace-id middleware does at the start of every pipeline. */
export function enterTraceId(traceId: string): void {
  const store = storage.getStore();
  if (store) store.traceId = traceId;
  else storage.enterWith({ traceId });
}

/** Ends what {@link enterTraceId} began, when the invocation ends: work it left running logs without the id. */
export function leaveTraceId(): void {
  const store = storage.getStore();
  if (store) store.traceId = undefined;
}

/** Runs `work` with `traceId` current: one record of a batch, whose id came with the record. */
export const withTraceId = <T>(traceId: string, work: () => T): T => storage.run({ traceId }, work);

/** The message attribute (SNS and SQS) that carries the trace id beside a body. */
export const TRACE_ID_ATTRIBUTE = 'traceId';

/** The current trace id as SNS/SQS message attributes, none outside a request. */
export function traceIdAttributes(): Record<string, { DataType: 'String'; StringValue: string }> {
  const traceId = currentTraceId();
  return traceId ? { [TRACE_ID_ATTRIBUTE]: { DataType: 'String', StringValue: traceId } } : {};
}

/**
 * The trace id a queue record carries (Lambda's SQS event spells attributes `stringValue`), when
 * well formed; else the record's own message id, so each record still has one of its own.
 */
export function traceIdOfRecord(record: {
  readonly messageId: string;
  readonly messageAttributes?: Readonly<Record<string, { readonly stringValue?: string } | undefined>>;
}): string {
  return traceIdOf(record.messageAttributes?.[TRACE_ID_ATTRIBUTE]?.stringValue, record.messageId);
}
