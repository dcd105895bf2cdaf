import { isTimeZone, MAX_HOLIDAYS, MAX_RANGES_PER_DAY, minutesOf } from '#domain/support/business-hours';
import {
  CANNED_SHORTCUT_PATTERN,
  MAX_CANNED_CONTENT_LENGTH,
  MAX_CANNED_TAG_LENGTH,
  MAX_CANNED_TAGS,
  MAX_CANNED_TITLE_LENGTH,
} from '#domain/support/canned-responses';
import { MAX_CSAT_COMMENT_LENGTH } from '#domain/support/csat';
import { MAX_TICKET_SUBJECT_LENGTH } from '#domain/support/tickets';
import { WEEKDAYS } from '#shared/db/business-hours';
import { TICKET_PRIORITIES, TICKET_STATUSES } from '#shared/db/support-ticket';
import { idSchema } from '#shared/ids';
import * as z from '#shared/schema';
import { queryInt } from '../params';

/** Schemas of the support desk's routes. */

const title = z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_CANNED_TITLE_LENGTH));
const content = z.string().check(z.minLength(1), z.maxLength(MAX_CANNED_CONTENT_LENGTH));
const shortcut = z.nullable(
  z.string().check(z.regex(CANNED_SHORTCUT_PATTERN, 'must be 1-32 characters of a-z, 0-9, _ and -, starting with a letter or digit')),
);
const tags = z.array(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_CANNED_TAG_LENGTH))).check(z.maxLength(MAX_CANNED_TAGS));

export const cannedResponseBody = z.strictObject({ title, content, shortcut: z.optional(shortcut), tags: z.optional(tags) });
export const cannedResponsePatch = z
  .strictObject({
    title: z.optional(title),
    content: z.optional(content),
    shortcut: z.optional(shortcut),
    tags: z.optional(tags),
  })
  .check(z.refine((patch) => Object.keys(patch).length > 0, 'must change at least one of title, content, shortcut, tags'));

export const cannedResponseParams = z.object({ responseId: idSchema });

const clock = z.string().check(z.regex(/^(?:[01]\d|2[0-3]):[0-5]\d$|^24:00$/, 'must be a time HH:MM from 00:00 to 24:00'));
const range = z.strictObject({ open: clock, close: clock });
const dayRanges = z.array(range).check(
  z.maxLength(MAX_RANGES_PER_DAY),
  z.superRefine((ranges, context) => {
    const sorted = ranges.map((entry, index) => ({ ...entry, index })).sort((a, b) => minutesOf(a.open) - minutesOf(b.open));
    sorted.forEach((entry, position) => {
      const previous = sorted[position - 1];
      if (minutesOf(entry.close) <= minutesOf(entry.open)) {
        context.issues.push({
          code: 'custom',
          message: 'close must be after open (a range ends on its own day)',
          input: entry,
          path: [entry.index, 'close'],
        });
      } else if (previous && minutesOf(entry.open) < minutesOf(previous.close)) {
        context.issues.push({ code: 'custom', message: 'overlaps another range of the day', input: entry, path: [entry.index, 'open'] });
      }
    });
  }),
);
const isoDate = z.string().check(
  z.regex(/^\d{4}-\d{2}-\d{2}$/, 'must be a date YYYY-MM-DD'),
  z.refine((value) => {
    const date = new Date(`${value}T00:00:00Z`);
    return !Number.isNaN(date.getTime()) && date.toISOString().startsWith(value);
  }, 'must be a real calendar date'),
);

export const businessHoursBody = z.strictObject({
  timezone: z.string().check(z.minLength(1), z.maxLength(64), z.refine(isTimeZone, 'must be an IANA time zone such as Europe/Berlin')),
  weekly: z.strictObject(
    Object.fromEntries(WEEKDAYS.map((weekday) => [weekday, z.optional(dayRanges)])) as Record<
      (typeof WEEKDAYS)[number],
      z.ZodMiniOptional<typeof dayRanges>
    >,
  ),
  holidays: z._default(z.array(isoDate).check(z.maxLength(MAX_HOLIDAYS)), []),
});

export const createTicketBody = z.strictObject({
  roomId: idSchema,
  subject: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_TICKET_SUBJECT_LENGTH))),
  priority: z.optional(z.enum(TICKET_PRIORITIES)),
});

export const ticketParams = z.object({
  ticketId: z.string().check(z.regex(/^tkt_[0-9a-z]{9,20}$/, 'must be a ticket id as the service answers it (tkt_...)')),
});

export const ticketsQuery = z.strictObject({
  status: z.optional(z.enum(TICKET_STATUSES)),
  assigneeId: z.optional(idSchema),
  limit: z._default(queryInt(1, 100), 50),
  cursor: z.optional(z.string().check(z.regex(/^tkt_[0-9a-z]{9,20}$/, 'must be the nextCursor of the previous page'))),
});

export const updateTicketBody = z
  .strictObject({
    status: z.optional(z.enum(TICKET_STATUSES)),
    assigneeId: z.optional(z.nullable(idSchema)),
    priority: z.optional(z.enum(TICKET_PRIORITIES)),
  })
  .check(z.refine((patch) => Object.keys(patch).length > 0, 'must change at least one of status, assigneeId, priority'));

export const pendingCsatQuery = z.strictObject({ roomId: idSchema });

export const surveyParams = z.object({
  surveyId: z.string().check(z.regex(/^csat_[0-9a-f]{24}$/, 'must be a survey id as the service answers it (csat_ and 24 hex digits)')),
});

export const answerCsatBody = z.strictObject({
  score: z.number().check(z.int(), z.minimum(1), z.maximum(5)),
  comment: z.optional(z.string().check(z.trim(), z.minLength(1), z.maxLength(MAX_CSAT_COMMENT_LENGTH))),
});
