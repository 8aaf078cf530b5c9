import { placeholdersIn, type RelaisConfig, type VerificationTemplate } from '../protocol/config.js';
import type { TaskVerification } from '../protocol/task.js';
import { taintReason } from './taint.js';

/**
 * Turns a task's verification request into argv commands, or refuses it before anything runs
 * (seed 000 A5 rows 1-2): unknown template, missing, unknown or tainted parameter.
 */

export interface PlannedRun {
  readonly templateId: string;
  readonly phase: 'fast' | 'slow';
  readonly cmd: string;
  readonly args: string[];
  readonly timeoutSeconds: number;
}

export type VerificationPlan = { ok: true; runs: PlannedRun[] } | { ok: false; problems: string[] };

export async function planVerification(
  request: TaskVerification,
  config: RelaisConfig['verification'],
  root: string,
): Promise<VerificationPlan> {
  const templates = new Map(config.templates.map((t) => [t.id, t]));
  const problems: string[] = [];
  const runs: PlannedRun[] = [];
  for (const phase of ['fast', 'slow'] as const) {
    for (const id of request[phase]) {
      const template = templates.get(id);
      if (!template) {
        problems.push(
          `unknown verification template "${id}" (known: ${[...templates.keys()].join(', ') || 'none'})`,
        );
        continue;
      }
      const given = request.params?.[id] ?? {};
      const expanded = await expandArgs(template, given, config, root);
      if (!expanded.ok) {
        problems.push(...expanded.problems.map((p) => `${id}: ${p}`));
        continue;
      }
      runs.push({
        templateId: id,
        phase,
        cmd: template.cmd,
        args: expanded.args,
        timeoutSeconds:
          template.timeout_seconds ??
          (phase === 'fast' ? config.timeout_fast_seconds : config.timeout_slow_seconds),
      });
    }
  }
  for (const id of Object.keys(request.params ?? {})) {
    if (!templates.has(id)) problems.push(`params given for unknown template "${id}"`);
  }
  return problems.length > 0 ? { ok: false, problems } : { ok: true, runs };
}

async function expandArgs(
  template: VerificationTemplate,
  given: Record<string, unknown>,
  config: RelaisConfig['verification'],
  root: string,
): Promise<{ ok: true; args: string[] } | { ok: false; problems: string[] }> {
  const problems: string[] = [];
  const values = new Map<string, string>();
  for (const name of Object.keys(given)) {
    if (!(name in template.params)) problems.push(`unknown parameter "${name}"`);
  }
  for (const name of new Set(placeholdersIn(template.args))) {
    const spec = template.params[name];
    if (!spec) continue; // config validation guarantees every placeholder is declared
    const reason = await taintReason(
      given[name],
      spec.kind,
      spec.max_len ?? config.max_param_len,
      config,
      root,
    );
    if (reason) problems.push(`parameter "${name}" rejected: ${reason}`);
    else values.set(name, String(given[name]));
  }
  if (problems.length > 0) return { ok: false, problems };
  // Each placeholder is replaced inside its own argv word; a value never splits into more words.
  const args = template.args.map((arg) =>
    arg.replace(/\{\{([A-Za-z0-9_]+)\}\}/g, (_, name: string) => values.get(name) ?? ''),
  );
  return { ok: true, args };
}
