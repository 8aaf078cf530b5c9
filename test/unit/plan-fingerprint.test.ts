import { describe, expect, it } from 'vitest';
import type { BuildTask } from '../../source/engine/protocol/task.js';
import { taskSchema } from '../../source/engine/protocol/task.js';
import type { FailedPlan } from '../../source/engine/protocol/workflow.js';
import { planWords } from '../../source/engine/session/plan-fingerprint.js';
import { PlanMemory } from '../../source/engine/workflow/plan-memory.js';
import { task } from '../support/project.js';

// Issue 15: a re-plan that only rewords the plan that failed is the same plan; another scope,
// other checks or another approach is not. The failed plans survive a resume (they are handed in).

const plan = (intent: string, instructions: string, extra: Record<string, unknown> = {}): BuildTask =>
  taskSchema.parse(
    task({ intent, builder: { mode: 'claude_code', max_turns: 4, instructions }, ...extra }),
  ) as BuildTask;

const FAILED = plan('Implement greet in src/a.ts', 'Add the greet function to src/a.ts and export it.');

async function memoryAfterFailure(): Promise<{ memory: PlanMemory; kept: FailedPlan[] }> {
  let kept: FailedPlan[] = [];
  const memory = new PlanMemory([], async (failed) => {
    kept = failed;
  });
  expect(memory.refuse(FAILED)).toBeNull();
  await memory.recordStop('STOP_VERIFY_FAILED_FAST');
  return { memory, kept };
}

describe('plan fingerprints (issue 15)', () => {
  it('reads the content words: no filler, no case, no plural or tense endings, paths kept whole', () => {
    expect(planWords('Implements the greet functions in src/a.ts, please.')).toEqual([
      'function',
      'greet',
      'implement',
      'src/a.ts',
    ]);
    expect(planWords('Implemented greet function — src/a.ts')).toEqual(
      planWords('implement the GREET function in src/a.ts'),
    );
  });

  it('refuses the failed plan reworded, under another id', async () => {
    const { memory } = await memoryAfterFailure();
    const reworded = plan(
      'Implements the greet function in src/a.ts',
      'Add a greet function to src/a.ts, then export it',
      { task_id: 'T1-again' },
    );
    expect(memory.refuse(reworded)).toMatch(/already failed with STOP_VERIFY_FAILED_FAST/);
  });

  it('lets through another approach, another scope or other checks', async () => {
    const { memory } = await memoryAfterFailure();
    const approach = plan(
      'Fix the failing check by correcting the greeting format',
      'Change greet so the test expecting "Hello, <name>" passes; keep the export.',
    );
    expect(memory.refuse(approach)).toBeNull();
    const scope = plan(FAILED.intent, FAILED.builder.instructions, {
      scope: {
        allowed_globs: ['src/a.ts', 'src/b.ts'],
        forbidden_globs: [],
        allow_new_files: false,
        allow_lockfile_changes: false,
      },
    });
    expect(memory.refuse(scope)).toBeNull();
    const checks = plan(FAILED.intent, FAILED.builder.instructions, {
      verification: { fast: ['ok', 'echo'], slow: [] },
    });
    expect(memory.refuse(checks)).toBeNull();
  });

  it('keeps what failed where a resumed workflow finds it again', async () => {
    const { kept } = await memoryAfterFailure();
    expect(kept).toHaveLength(1);
    expect(kept[0]).toMatchObject({ code: 'STOP_VERIFY_FAILED_FAST', intent: 'Implement greet in src/a.ts' });
    const resumed = new PlanMemory(kept);
    expect(resumed.replanNote()).toContain('"Implement greet in src/a.ts" (STOP_VERIFY_FAILED_FAST)');
    expect(
      resumed.refuse(plan('implement greet in src/a.ts', 'Add the greet function to src/a.ts and export it')),
    ).toMatch(/already failed/);
  });
});
