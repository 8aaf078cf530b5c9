// An agent CLI that answers at once, for the runner's own measurements: the build's warm-up tick
// (scripts/command-bundles.mjs) and bench/tick-overhead.mjs. A shell script, so no interpreter's
// start-up is counted as the agent's. Called with `--permission-mode plan` it is the orchestrator
// and answers one task (its scope `src/**`, or `scopedGlob` when INSTANT_AGENT_SCOPED=1 is in its
// environment); otherwise it is the builder: it appends a line to `edits` and answers.
import { chmodSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export function writeInstantAgent(dir, { edits, scopedGlob = 'src/**' }) {
  const task = (glob) =>
    JSON.stringify({
      task_id: 'B1',
      milestone_id: 'BENCH',
      task_kind: 'execute',
      intent: 'one edit',
      scope: {
        allowed_globs: [glob],
        forbidden_globs: [],
        allow_new_files: false,
        allow_lockfile_changes: false,
      },
      diff_limits: { max_files_touched: 5, max_lines_changed: 100 },
      verification: { fast: [], slow: [] },
      builder: { mode: 'claude_code', max_turns: 2, instructions: 'edit' },
    });
  const wrap = (text) =>
    JSON.stringify({
      type: 'result',
      subtype: 'success',
      is_error: false,
      result: text,
      total_cost_usd: 0,
      num_turns: 1,
    });
  const quoted = (text) => `'${text.replace(/'/g, "'\\''")}'`;
  const builder = wrap(
    JSON.stringify({ summary: 'edited', files_intended: [edits], commands_ran: [], notes: [] }),
  );
  const script = `#!/bin/sh
cat > /dev/null
case "$*" in
  *"--permission-mode plan"*)
    if [ "$INSTANT_AGENT_SCOPED" = 1 ]; then printf '%s\\n' ${quoted(wrap(task(scopedGlob)))}
    else printf '%s\\n' ${quoted(wrap(task('src/**')))}; fi ;;
  *) date +%s%N >> ${quoted(edits)}; printf '%s\\n' ${quoted(builder)} ;;
esac
`;
  const path = join(dir, 'agent.sh');
  writeFileSync(path, script);
  chmodSync(path, 0o755);
  return path;
}
