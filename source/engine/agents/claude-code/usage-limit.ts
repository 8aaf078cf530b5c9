/**
 * Claude Code's usage-limit and rate-limit answers, recognised from the result text or the error
 * output, with the time the limit resets. Forms seen in the wild (anthropics/claude-code issues
 * #11429, #15064, #22946, #51981, #55147):
 *   `Claude AI usage limit reached|1762952400`            (epoch seconds)
 *   `Claude usage limit reached. Your limit will reset at 9am (America/Chicago).`
 *   `You've hit your limit · resets 10pm (America/New_York)`
 *   `You've hit your limit · resets Apr 23 at 4pm (America/Recife)`
 *   `You've hit your limit · resets 3:30am (Europe/Moscow)`
 * and an API 429 (`rate_limit_error`), for which no time is given. A named time zone is honoured;
 * without one, the local zone is used. Issue 15 adds the text-only subscription limits, with no
 * HTTP status at all (anthropics/claude-code #5977, #9236, #10017 and later):
 *   `You've hit your session limit · resets 6pm (Europe/Paris)`
 *   `You've hit your weekly limit · resets Sep 15, 3am (America/New_York)`
 *   `You're out of extra usage · resets 4pm (UTC)`
 * Codex says `You've hit your usage limit. ... try again in 2 hours 5 minutes.` A reset that has
 * just passed (the two clocks disagree a little) is a short wait and a retry, not tomorrow's reset.
 * Peers' tests add `Opus weekly limit reached ∙ resets Oct 31, 9am` (#10333), an API spend cap's
 * `You will regain access on 2026-05-01 at 00:00 UTC.` and `Too many requests. Please wait 30
 * seconds` (test/corpus/cases.json names each source).
 */

export interface UsageLimit {
  /** When to try again. */
  readonly resetAt: Date;
  readonly message: string;
}

/** Without a reset time the runner waits this long, then tries again. */
const DEFAULT_WAIT_MS = 5 * 60 * 1000;
/**
 * A reset further away than this is read as a misparse: the wait is capped here. A time of day
 * ("resets 9pm") is at most a day away: an extra-usage or weekly limit can reset 20 hours on.
 */
const MAX_WAIT_MS = 24 * 60 * 60 * 1000;
/** A weekly limit names its day ("resets Sep 15, 3am") or a span in days: up to a week and a day. */
const MAX_DATED_WAIT_MS = 8 * 24 * 60 * 60 * 1000;
/** A reset time just passed (clock skew) still waits a little, so the retry is not immediate. */
const MIN_WAIT_MS = 30 * 1000;

/** A reset time this far in the past is clock skew: wait MIN_WAIT_MS and try again. */
const JUST_PASSED_MS = 15 * 60 * 1000;

/**
 * "rate limit" needs its separator: `ratelimit` is a package or a function (`@upstash/ratelimit`,
 * `TypeError: ratelimit.check is not a function`), never the CLI's own error (subsy/ralph-tui #100).
 */
const LIMITED =
  /usage limit|limit reached|hit your (\w+[ -])?limit|(session|weekly|5-hour|daily|opus|sonnet) limit|out of (extra )?usage|extra usage|rate[ _-]limit|too many requests|\b429\b|overloaded/i;
const WEEKDAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

export function readUsageLimit(text: string, now: Date, apiStatus: number | null = null): UsageLimit | null {
  const epoch = /usage limit reached\s*\|\s*(\d{10})/i.exec(text);
  if (epoch) return capped(new Date(Number(epoch[1]) * 1000), now, text);
  if (!LIMITED.test(text) && apiStatus !== 429) return null;
  const regain = regainAccessAt(text);
  if (regain) return capped(regain, now, text, MAX_DATED_WAIT_MS);
  const relative =
    /try again in\s+((?:\d+\s*(?:days?|hours?|hrs?|minutes?|mins?|seconds?|secs?)[\s,and]*)+)/i.exec(text);
  if (relative)
    return capped(new Date(now.getTime() + durationMs(relative[1] as string)), now, text, MAX_DATED_WAIT_MS);
  const asked = /(?:please )?(?:wait|retry[- ]after:?)\s+(\d+)\s*(s|secs?|seconds?|m|mins?|minutes?)\b/i.exec(
    text,
  );
  if (asked)
    return capped(
      new Date(now.getTime() + Number(asked[1]) * (/^m/i.test(asked[2] as string) ? 60_000 : 1000)),
      now,
      text,
    );
  const weekday =
    /resets?\s+(?:on\s+)?(mon|tue|wed|thu|fri|sat|sun)[a-z]*\.?\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s*\(([A-Za-z_]+(?:\/[A-Za-z_+-]+)*)\))?/i.exec(
      text,
    );
  if (weekday) {
    const resetAt = nextWeekday(
      WEEKDAYS.indexOf((weekday[1] as string).toLowerCase()),
      hour24(Number(weekday[2]), weekday[4]?.toLowerCase() ?? null),
      Number(weekday[3] ?? 0),
      validZone(weekday[5]),
      now,
    );
    return capped(resetAt, now, text, MAX_DATED_WAIT_MS);
  }
  const clock =
    /(?:resets?|try again at)\s+(?:(?:at|on)\s+)?(?:([A-Za-z]{3})[a-z]*\.?\s+(\d{1,2})(?:st|nd|rd|th)?,?\s+(?:at\s+)?)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?(?:\s*\(([A-Za-z_]+(?:\/[A-Za-z_+-]+)*)\))?/i.exec(
      text,
    );
  if (clock) {
    const resetAt = wallClockTime(
      {
        month: clock[1] ? MONTHS.indexOf(clock[1].toLowerCase()) : null,
        day: clock[2] ? Number(clock[2]) : null,
        hour: hour24(Number(clock[3]), clock[5]?.toLowerCase() ?? null),
        minute: Number(clock[4] ?? 0),
      },
      validZone(clock[6]) ?? null,
      now,
    );
    if (resetAt) return capped(resetAt, now, text, clock[2] ? MAX_DATED_WAIT_MS : MAX_WAIT_MS);
  }
  return { resetAt: new Date(now.getTime() + DEFAULT_WAIT_MS), message: firstLine(text) };
}

/**
 * An API spend cap gives its date and time in UTC: "You will regain access on 2026-05-01 at 00:00
 * UTC." (frankbria/ralph-claude-code, TAP-1474). Null when the text names no such instant.
 */
function regainAccessAt(text: string): Date | null {
  const m = /regain access on (\d{4})-(\d{2})-(\d{2})(?: at (\d{1,2}):(\d{2}))?/i.exec(text);
  if (!m) return null;
  const at = new Date(
    Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4] ?? 0), Number(m[5] ?? 0)),
  );
  return Number.isNaN(at.getTime()) ? null : at;
}

function durationMs(text: string): number {
  const unit: Record<string, number> = { d: 86_400_000, h: 3_600_000, m: 60_000, s: 1000 };
  let total = 0;
  for (const [, n, u] of text.matchAll(/(\d+)\s*([a-z])/gi))
    total += Number(n) * (unit[(u as string).toLowerCase()] ?? 0);
  return total;
}

function hour24(hour: number, meridiem: string | null): number {
  if (meridiem === 'am') return hour % 12;
  if (meridiem === 'pm') return (hour % 12) + 12;
  return hour % 24;
}

function validZone(zone: string | undefined): string | null {
  if (!zone) return null;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: zone });
    return zone;
  } catch {
    return null;
  }
}

interface WallClock {
  readonly month: number | null;
  readonly day: number | null;
  readonly hour: number;
  readonly minute: number;
}

/**
 * The next instant whose wall-clock time in `zone` (or locally) is `wall`: today's, or
 * tomorrow's when today's has passed; with a month and day, that day (next year if it passed).
 */
function wallClockTime(wall: WallClock, zone: string | null, now: Date): Date | null {
  const today = zonedParts(now, zone);
  const month = wall.month !== null && wall.month >= 0 ? wall.month : today.month;
  const day = wall.day ?? today.day;
  let at = instantOf({ year: today.year, month, day, hour: wall.hour, minute: wall.minute }, zone);
  // Just passed: the CLI's clock is a little ahead of ours, or the retry came late. Try again soon.
  if (at.getTime() <= now.getTime() && now.getTime() - at.getTime() <= JUST_PASSED_MS) return now;
  if (at.getTime() <= now.getTime()) {
    at =
      wall.day === null
        ? new Date(at.getTime() + 24 * 60 * 60 * 1000)
        : instantOf({ year: today.year + 1, month, day, hour: wall.hour, minute: wall.minute }, zone);
  }
  return Number.isNaN(at.getTime()) ? null : at;
}

/** "resets Mon 12:00am": the next such weekday at that time (a week on when it is today and passed). */
function nextWeekday(target: number, hour: number, minute: number, zone: string | null, now: Date): Date {
  const today = zonedParts(now, zone);
  const todayWeekday = new Date(Date.UTC(today.year, today.month, today.day)).getUTCDay();
  let ahead = (target - todayWeekday + 7) % 7;
  let at = instantOf({ year: today.year, month: today.month, day: today.day + ahead, hour, minute }, zone);
  if (at.getTime() <= now.getTime() && now.getTime() - at.getTime() <= JUST_PASSED_MS) return now;
  if (at.getTime() <= now.getTime()) {
    ahead += 7;
    at = instantOf({ year: today.year, month: today.month, day: today.day + ahead, hour, minute }, zone);
  }
  return at;
}

interface Parts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
  readonly hour: number;
  readonly minute: number;
}

function zonedParts(date: Date, zone: string | null): Parts {
  if (zone === null)
    return {
      year: date.getFullYear(),
      month: date.getMonth(),
      day: date.getDate(),
      hour: date.getHours(),
      minute: date.getMinutes(),
    };
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    })
      .formatToParts(date)
      .map((p) => [p.type, Number(p.value)]),
  );
  return {
    year: parts.year ?? 0,
    month: (parts.month ?? 1) - 1,
    day: parts.day ?? 1,
    hour: parts.hour ?? 0,
    minute: parts.minute ?? 0,
  };
}

/** The instant at which `zone` shows `wall` (two passes settle a daylight-saving offset). */
function instantOf(wall: Parts, zone: string | null): Date {
  if (zone === null) return new Date(wall.year, wall.month, wall.day, wall.hour, wall.minute);
  const asUtc = Date.UTC(wall.year, wall.month, wall.day, wall.hour, wall.minute);
  let guess = asUtc;
  for (let i = 0; i < 2; i++) {
    const shown = zonedParts(new Date(guess), zone);
    const shownUtc = Date.UTC(shown.year, shown.month, shown.day, shown.hour, shown.minute);
    guess += asUtc - shownUtc;
  }
  return new Date(guess);
}

function capped(resetAt: Date, now: Date, text: string, maxWaitMs = MAX_WAIT_MS): UsageLimit {
  const wait = Math.min(Math.max(resetAt.getTime() - now.getTime(), MIN_WAIT_MS), maxWaitMs);
  return { resetAt: new Date(now.getTime() + wait), message: firstLine(text) };
}

function firstLine(text: string): string {
  return (text.trim().split('\n')[0] ?? '').slice(0, 200);
}
