import type { z } from 'zod';

/**
 * Reading JSON a model wrote. The prompts ask for one bare object; a single fenced block around the
 * whole answer is tolerated because models add it habitually and it carries no other content.
 * Anything else (prose around the object, two objects, arrays) is invalid and gets a reason the
 * retry prompt can quote.
 */

export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

export function parseModelJson<S extends z.ZodType>(text: string, schema: S): Parsed<z.infer<S>> {
  const body = stripWholeFence(text.trim());
  if (body.length === 0) return { ok: false, reason: 'the answer was empty' };
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch (error) {
    return { ok: false, reason: `the answer is not a JSON object (${(error as Error).message})` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, reason: 'the answer must be one JSON object' };
  }
  const result = schema.safeParse(value);
  if (!result.success) return { ok: false, reason: `schema violations: ${describeZodError(result.error)}` };
  return { ok: true, value: result.data };
}

function stripWholeFence(text: string): string {
  const match = /^```[A-Za-z0-9_-]*\n([\s\S]*?)\n?```$/.exec(text);
  return match?.[1] !== undefined ? match[1].trim() : text;
}

/** One line per issue, `path.to.field: message`, capped so it fits a prompt and a report. */
export function describeZodError(error: z.ZodError, maxIssues = 8): string {
  const lines = flatten(error.issues, []).slice(0, maxIssues + 1);
  const shown = lines.slice(0, maxIssues);
  if (lines.length > maxIssues) shown.push('(+more)');
  return shown.join('; ');
}

type Issue = z.ZodError['issues'][number];

/**
 * A union failure says only "invalid input"; the useful story is the branch that came closest
 * (fewest issues), so that is what gets described, under the union's path.
 */
function flatten(issues: readonly Issue[], prefix: PropertyKey[]): string[] {
  return issues.flatMap((issue) => {
    const path = [...prefix, ...issue.path];
    const branches = issue.code === 'invalid_union' ? (issue as { errors?: Issue[][] }).errors : undefined;
    if (branches && branches.length > 0) {
      const closest = [...branches].sort((a, b) => a.length - b.length)[0] ?? [];
      if (closest.length > 0) return flatten(closest, path);
    }
    return [`${path.length > 0 ? path.map(String).join('.') : '(root)'}: ${issue.message}`];
  });
}
