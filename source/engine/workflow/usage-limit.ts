/**
 * Claude Code's usage-limit and rate-limit answers, recognised from the result text or the error
 * output, with the time the limit resets. Forms seen in the wild: `Claude AI usage limit
 * reached|1737331200` (epoch seconds), `5-hour limit reached ∙ resets 3pm`, `You've hit your
 * limit · resets 11am (Europe/Paris)`, and an API 429 (`rate_limit`), for which no time is given.
 */

export interface UsageLimit {
  /** When to try again. */
  readonly resetAt: Date;
  readonly message: string;
}

/** Without a reset time the runner waits this long, then tries again. */
const DEFAULT_WAIT_MS = 5 * 60 * 1000;
/** A reset further away than this is read as a misparse: the wait is capped here. */
const MAX_WAIT_MS = 6 * 60 * 60 * 1000;

export function readUsageLimit(text: string, now: Date, apiStatus: number | null = null): UsageLimit | null {
  const epoch = /usage limit reached\s*\|\s*(\d{10})/i.exec(text);
  if (epoch) return cap(new Date(Number(epoch[1]) * 1000), now, text);
  const limited =
    /usage limit|limit reached|hit your limit|rate[ _-]?limit|too many requests|\b429\b/i.test(text) ||
    apiStatus === 429;
  if (!limited) return null;
  const clock = /resets?\s+(?:at\s+)?(\d{1,2})(?::(\d{2}))?\s*(am|pm)?/i.exec(text);
  if (clock)
    return cap(
      nextClockTime(Number(clock[1]), Number(clock[2] ?? 0), clock[3]?.toLowerCase() ?? null, now),
      now,
      text,
    );
  return { resetAt: new Date(now.getTime() + DEFAULT_WAIT_MS), message: firstLine(text) };
}

function nextClockTime(hour: number, minute: number, meridiem: string | null, now: Date): Date {
  let h = hour % 12;
  if (meridiem === 'pm') h += 12;
  if (meridiem === null) h = hour % 24;
  const at = new Date(now);
  at.setHours(h, minute, 0, 0);
  if (at.getTime() <= now.getTime()) at.setDate(at.getDate() + 1);
  return at;
}

function cap(resetAt: Date, now: Date, text: string): UsageLimit {
  const wait = Math.min(Math.max(resetAt.getTime() - now.getTime(), 0), MAX_WAIT_MS);
  return { resetAt: new Date(now.getTime() + wait), message: firstLine(text) };
}

function firstLine(text: string): string {
  return (text.trim().split('\n')[0] ?? '').slice(0, 200);
}
