import { MAX_LATENCY_MS, MAX_SAMPLES_PER_REQUEST, MAX_WINDOW_MINUTES, WINDOW_PATTERN, windowMinutes } from '#domain/calls/voice-latency';
import { VOICE_LATENCY_KINDS } from '#shared/db/voice-latency';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

/** Schemas of the call and voice AI routes. */

export const callTokenBody = z.strictObject({ roomId: idSchema });

const kind = z.enum(VOICE_LATENCY_KINDS);
const latencyMs = z.number().check(z.nonnegative(), z.maximum(MAX_LATENCY_MS));
const sample = z.strictObject({ kind, latencyMs });

/** One sample (`{ kind, latencyMs }`) or a batch (`{ samples: [...] }`), never both. */
export const voiceMetricsBody = z.pipe(
  z
    .strictObject({
      kind: z.optional(kind),
      latencyMs: z.optional(latencyMs),
      samples: z.optional(z.array(sample).check(z.minLength(1), z.maxLength(MAX_SAMPLES_PER_REQUEST))),
    })
    .check(
      z.superRefine((body, context) => {
        const single = body.kind !== undefined || body.latencyMs !== undefined;
        if (body.samples !== undefined && single) {
          context.issues.push({
            code: 'custom',
            message: 'send one sample (kind, latencyMs) or samples, not both',
            input: body,
            path: ['samples'],
          });
        } else if (body.samples === undefined) {
          for (const field of ['kind', 'latencyMs'] as const) {
            if (body[field] === undefined)
              context.issues.push({ code: 'custom', message: 'is required (or send samples)', input: body, path: [field] });
          }
        }
      }),
    ),
  z.transform((body) => body.samples ?? [{ kind: body.kind as z.infer<typeof kind>, latencyMs: body.latencyMs as number }]),
);

export const voiceStatsQuery = z.strictObject({
  window: z._default(
    z.string().check(
      z.regex(WINDOW_PATTERN, 'must be minutes or hours such as 15m, 1h, 24h'),
      z.refine((window) => windowMinutes(window) <= MAX_WINDOW_MINUTES, `must be at most ${MAX_WINDOW_MINUTES / 60}h`),
    ),
    '1h',
  ),
});
