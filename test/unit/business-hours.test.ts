import { describe, expect, it } from 'vitest';
import { instantOf, isTimeZone, supportStatus } from '#domain/support/business-hours';
import type { BusinessHoursConfig } from '#shared/db/business-hours';

/**
 * Support hours against fixed clocks: the status is computed in the project's timezone, so a
 * daylight saving change moves the UTC instants of the same local hours, holidays close a whole
 * local day, and a local time a clock change skips or repeats maps to one instant.
 */

const nineToFive = { open: '09:00', close: '17:00' };
const weekdays = (ranges: { open: string; close: string }[]) => ({
  monday: ranges,
  tuesday: ranges,
  wednesday: ranges,
  thursday: ranges,
  friday: ranges,
});
const at = (iso: string) => Date.parse(iso);

describe('supportStatus', () => {
  const berlin: BusinessHoursConfig = { timezone: 'Europe/Berlin', weekly: weekdays([nineToFive]), holidays: [] };

  it('is open inside a range, with the local close as an instant (CET is UTC+1)', () => {
    // Act: Wednesday 2026-03-25 12:00 in Berlin
    const status = supportStatus(berlin, at('2026-03-25T11:00:00Z'));

    // Assess
    expect(status).toEqual({ openNow: true, nextOpensAt: null, closesAt: '2026-03-25T16:00:00.000Z' });
  });

  it('is closed a minute before opening and opens at the local hour', () => {
    // Act: Friday 2026-03-27 08:59 CET
    const status = supportStatus(berlin, at('2026-03-27T07:59:00Z'));

    // Assess
    expect(status).toEqual({ openNow: false, nextOpensAt: '2026-03-27T08:00:00.000Z', closesAt: null });
  });

  it('opens after a weekend that changes the clocks at the new offset (CEST is UTC+2 from 2026-03-29)', () => {
    // Act: Friday 2026-03-27 17:30 CET, after closing
    const status = supportStatus(berlin, at('2026-03-27T16:30:00Z'));

    // Assess: Monday 09:00 CEST
    expect(status).toEqual({ openNow: false, nextOpensAt: '2026-03-30T07:00:00.000Z', closesAt: null });
  });

  it('counts the same local hour open on both sides of the change', () => {
    // Act: 16:30 local on the Friday before (CET) and the Monday after (CEST)
    const before = supportStatus(berlin, at('2026-03-27T15:30:00Z'));
    const after = supportStatus(berlin, at('2026-03-30T14:30:00Z'));
    const afterClosing = supportStatus(berlin, at('2026-03-30T15:30:00Z'));

    // Assess: 15:30Z is 17:30 CEST on the Monday, closed
    expect([before.openNow, after.openNow, afterClosing.openNow]).toEqual([true, true, false]);
  });

  it('skips a holiday to the next opening day', () => {
    // Prepare: Friday 2026-12-25 is a holiday
    const hours: BusinessHoursConfig = { ...berlin, holidays: ['2026-12-25'] };

    // Act: Thursday 2026-12-24 18:00, and Friday at noon
    const thursdayEvening = supportStatus(hours, at('2026-12-24T17:00:00Z'));
    const holidayNoon = supportStatus(hours, at('2026-12-25T11:00:00Z'));

    // Assess: Monday 2026-12-28 09:00 CET
    expect(thursdayEvening).toEqual({ openNow: false, nextOpensAt: '2026-12-28T08:00:00.000Z', closesAt: null });
    expect(holidayNoon).toEqual(thursdayEvening);
  });

  it('takes the holiday as a local date: late on the day before in UTC is the holiday already in Tokyo', () => {
    // Prepare
    const tokyo: BusinessHoursConfig = { timezone: 'Asia/Tokyo', weekly: weekdays([nineToFive]), holidays: ['2026-05-05'] };

    // Act: 2026-05-05 10:00 in Tokyo is 2026-05-05T01:00Z
    const status = supportStatus(tokyo, at('2026-05-05T01:00:00Z'));

    // Assess: Wednesday 2026-05-06 09:00 JST
    expect(status).toEqual({ openNow: false, nextOpensAt: '2026-05-06T00:00:00.000Z', closesAt: null });
  });

  it('uses the second of two ranges of a day after a lunch break, and closes at 24:00', () => {
    // Prepare
    const hours: BusinessHoursConfig = {
      timezone: 'UTC',
      weekly: {
        monday: [
          { open: '13:00', close: '24:00' },
          { open: '08:00', close: '12:00' },
        ],
      },
      holidays: [],
    };

    // Act: Monday 2026-11-23 at 12:30 and at 23:59
    const lunch = supportStatus(hours, at('2026-11-23T12:30:00Z'));
    const late = supportStatus(hours, at('2026-11-23T23:59:00Z'));

    // Assess
    expect(lunch).toEqual({ openNow: false, nextOpensAt: '2026-11-23T13:00:00.000Z', closesAt: null });
    expect(late).toEqual({ openNow: true, nextOpensAt: null, closesAt: '2026-11-24T00:00:00.000Z' });
  });

  it('never opens without hours', () => {
    // Act
    const status = supportStatus({ timezone: 'UTC', weekly: {}, holidays: [] }, at('2026-11-23T12:00:00Z'));

    // Assess
    expect(status).toEqual({ openNow: false, nextOpensAt: null, closesAt: null });
  });
});

describe('instantOf a local time', () => {
  it('maps a time the spring change skips to the moment the clock jumps (New York, 2026-03-08 02:30)', () => {
    // Act
    const instant = instantOf({ year: 2026, month: 3, day: 8 }, 150, 'America/New_York');

    // Assess: 03:00 EDT
    expect(new Date(instant).toISOString()).toBe('2026-03-08T07:00:00.000Z');
  });

  it('maps a time the autumn change repeats to its first occurrence (New York, 2026-11-01 01:30)', () => {
    // Act
    const instant = instantOf({ year: 2026, month: 11, day: 1 }, 90, 'America/New_York');

    // Assess: 01:30 EDT, not 01:30 EST an hour later
    expect(new Date(instant).toISOString()).toBe('2026-11-01T05:30:00.000Z');
  });
});

describe('isTimeZone', () => {
  it('takes IANA zones and refuses anything else', () => {
    // Assess
    expect(['Europe/Berlin', 'America/New_York', 'UTC', 'Asia/Kolkata'].map(isTimeZone)).toEqual([true, true, true, true]);
    expect(['Mars/Olympus', 'GMT+25', '', 'Europe/Berlin '].map(isTimeZone)).toEqual([false, false, false, false]);
  });
});
