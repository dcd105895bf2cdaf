import {
  DISPOSITION_CODE_PATTERN,
  isDefaultDisposition,
  MAX_DISPOSITION_LABEL_LENGTH,
  MAX_PROJECT_DISPOSITIONS,
} from '#domain/ai/dispositions';
import { MAX_HANDOFF_NOTE_LENGTH } from '#domain/ai/handoff';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';

/** Schemas of the handoff and agent-queue routes. */

const note = z.optional(z.string().check(z.maxLength(MAX_HANDOFF_NOTE_LENGTH)));
const dispositionCode = z
  .string()
  .check(z.regex(DISPOSITION_CODE_PATTERN, 'must be 2-40 characters of a-z, 0-9 and _, starting with a letter'));

export const startHandoffBody = z._default(z.strictObject({ agentId: z.optional(idSchema), note }), {});

export const completeHandoffBody = z.strictObject({
  // Any string: an unknown code is a 400 unknown_disposition naming the allowed codes, not a shape error.
  disposition: z.string().check(z.minLength(1), z.maxLength(200)),
  note,
});

export const dispositionsBody = z.strictObject({
  dispositions: z
    .array(
      z.strictObject({
        code: dispositionCode,
        label: z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_DISPOSITION_LABEL_LENGTH)),
      }),
    )
    .check(
      z.maxLength(MAX_PROJECT_DISPOSITIONS),
      z.superRefine((entries, context) => {
        const seen = new Set<string>();
        entries.forEach((entry, index) => {
          const problem = isDefaultDisposition(entry.code)
            ? 'is a default code and may not be redefined'
            : seen.has(entry.code)
              ? 'is listed twice'
              : undefined;
          seen.add(entry.code);
          if (problem)
            context.issues.push({ code: 'custom', message: `${entry.code} ${problem}`, input: entry.code, path: [index, 'code'] });
        });
      }),
    ),
});
