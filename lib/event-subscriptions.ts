import type { EventSubscriber } from '#wiring';
import { EVENT_TYPE_ATTRIBUTE } from '../functions/shared/events.ts';

/** An SNS filter policy: attribute → allowed values, or `$or` of such groups. */
export type FilterPolicy = Record<string, unknown>;

/**
 * The subscription's filter policy, the same on AWS (`lib/constructs/chat-subscribers.ts`) and in
 * the local stand-in (`lib/local/sqs-local.ts`): the event types, and the attribute conditions on
 * the types they hold for. When they hold for only some of the types, the others pass on their type
 * alone through an `$or` (SNS counts its combinations against the policy's limit of 150: a handful here).
 */
export function filterPolicyOf(subscriber: EventSubscriber): FilterPolicy | undefined {
  const conditions = Object.fromEntries(Object.entries(subscriber.attributeFilter ?? {}).map(([name, values]) => [name, [...values]]));
  const types = subscriber.eventTypes === 'all' ? undefined : [...subscriber.eventTypes];
  const filtered = subscriber.attributeFilterTypes ? [...subscriber.attributeFilterTypes] : undefined;
  const unfiltered = filtered && types?.filter((type) => !filtered.includes(type));
  if (filtered && Object.keys(conditions).length > 0 && (!types || (unfiltered?.length ?? 0) > 0)) {
    return {
      $or: [
        { [EVENT_TYPE_ATTRIBUTE]: types ? unfiltered : [{ 'anything-but': filtered }] },
        { [EVENT_TYPE_ATTRIBUTE]: filtered, ...conditions },
      ],
    };
  }
  const policy: FilterPolicy = { ...(types ? { [EVENT_TYPE_ATTRIBUTE]: types } : {}), ...conditions };
  return Object.keys(policy).length > 0 ? policy : undefined;
}

/**
 * Whether the subscriber exists with these settings (the CDK context's provider URLs at synth, the
 * local runtime's settings at start): one that needs an unset setting would only drop every event.
 */
export const isSubscriberEnabled = (subscriber: EventSubscriber, settings: Readonly<Record<string, string | undefined>>): boolean =>
  !subscriber.requiresSetting || Boolean(settings[subscriber.requiresSetting]);
