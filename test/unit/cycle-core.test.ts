import { describe, expect, it } from 'vitest';
import { type DecideInput, decide, stateProblems } from '../../source/engine/cycle/decide.js';
import { deriveNonce, newCycleId } from '../../source/engine/cycle/nonce.js';
import { type CycleState, cycleStateSchema, freshState } from '../../source/engine/cycle/state.js';
import { type CriterionVerdict, combineVerdict } from '../../source/engine/cycle/verdict.js';
import {
  cyclePolicySchema,
  defaultAgents,
  defaultPolicy,
} from '../../source/engine/protocol/cycle-policy.js';

const SHA = 'a'.repeat(40);
const policy = defaultPolicy();

function state(overrides: (s: CycleState) => void = () => {}): CycleState {
  const s = freshState(new Date('2026-01-29T04:00:00Z'), 'hybrid');
  overrides(s);
  return cycleStateSchema.parse(s);
}

function executing(
  sub: CycleState['task']['sub_step'],
  more: (s: CycleState) => void = () => {},
): CycleState {
  return state((s) => {
    s.phase = 'execute';
    s.track = {
      ...s.track,
      id: 'T1',
      status: 'in-progress',
      spec_path: 'x',
      plan_path: 'y',
      task_count: 2,
      task_current: 1,
    };
    s.task = { ...s.task, id: 'TASK1', sub_step: sub, base_commit: SHA };
    more(s);
  });
}

const phaseIs = (phase: CycleState['phase']) => (s: CycleState) => {
  s.phase = phase;
};

const input = (s: CycleState, extra: Partial<DecideInput> = {}): DecideInput => ({
  state: s,
  policy,
  budgetExceeded: false,
  problems: stateProblems(s),
  ...extra,
});

describe('seed 003 Step 3 DECIDE: one test per row, first match wins', () => {
  it('row 1: budget exceeded -> escalate (whatever the phase)', () => {
    expect(decide(input(executing('implement'), { budgetExceeded: true }))).toMatchObject({
      action: 'escalate',
      row: 1,
    });
  });
  it('row 1: state invalid -> escalate', () => {
    const s = state((x) => {
      x.phase = 'execute';
    });
    const d = decide(input(s));
    expect(d).toMatchObject({ action: 'escalate', row: 1 });
    expect(d.reason).toContain('phase execute without track.id');
  });
  it('row 2: stuck with a re-plan already tried -> escalate', () => {
    const s = executing('implement', (x) => {
      x.loop.stuck_count = 3;
      x.task.replan_attempted = true;
      x.last_result = { ok: false, details: 'x', code: null };
      x.task.retry_count = 5; // row 4 would match too: row 2 comes first
    });
    expect(decide(input(s))).toMatchObject({ action: 'escalate', row: 2 });
  });
  it('row 3: stuck without a re-plan -> replan_task', () => {
    const s = executing('verify', (x) => {
      x.loop.stuck_count = 3;
    });
    expect(decide(input(s))).toMatchObject({ action: 'replan_task', row: 3 });
  });
  it('row 4: implement failed with retry_count >= max_retries -> rollback_and_escalate', () => {
    const s = executing('implement', (x) => {
      x.last_result = { ok: false, details: 'x', code: null };
      x.task.retry_count = 3;
      x.loop.stuck_count = 2;
    });
    expect(decide(input(s))).toMatchObject({ action: 'rollback_and_escalate', row: 4 });
  });
  it('row 5: implement failed with retries left -> retry_task', () => {
    const s = executing('implement', (x) => {
      x.last_result = { ok: false, details: 'x', code: null };
      x.task.retry_count = 2;
    });
    expect(decide(input(s))).toMatchObject({ action: 'retry_task', row: 5 });
  });
  it('row 6: research -> seed_docs', () => {
    expect(decide(input(state()))).toMatchObject({ action: 'seed_docs', row: 6 });
  });
  it('row 7: select-track without a track -> pick_track (a completed track is no selection)', () => {
    expect(decide(input(state(phaseIs('select-track'))))).toMatchObject({
      action: 'pick_track',
      row: 7,
    });
    const done = state((s) => {
      s.phase = 'select-track';
      s.track.id = 'T0';
      s.track.status = 'complete';
    });
    expect(decide(input(done))).toMatchObject({ action: 'pick_track', row: 7 });
  });
  it('row 8: track selected, no spec -> create_spec', () => {
    const s = state((x) => {
      x.phase = 'select-track';
      x.track.id = 'T1';
      x.track.status = 'in-progress';
    });
    expect(decide(input(s))).toMatchObject({ action: 'create_spec', row: 8 });
  });
  it('row 9: spec, no plan -> create_plan', () => {
    const s = state((x) => {
      x.phase = 'select-track';
      x.track.id = 'T1';
      x.track.status = 'in-progress';
      x.track.spec_path = 'specs/tracks/T1/SPEC.md';
    });
    expect(decide(input(s))).toMatchObject({ action: 'create_plan', row: 9 });
  });
  it('row 10: execute with sub_step null or generate -> generate_task', () => {
    expect(decide(input(executing(null)))).toMatchObject({ action: 'generate_task', row: 10 });
    expect(decide(input(executing('generate')))).toMatchObject({ action: 'generate_task', row: 10 });
  });
  it('row 11: implement (last result ok) -> implement_task', () => {
    const s = executing('implement', (x) => {
      x.last_result = { ok: true, details: 'retry prepared', code: null };
      x.task.retry_count = 3;
    });
    expect(decide(input(s))).toMatchObject({ action: 'implement_task', row: 11 });
  });
  it('row 12: verify -> verify_task', () => {
    expect(decide(input(executing('verify')))).toMatchObject({ action: 'verify_task', row: 12 });
  });
  it('row 13: reflect -> reflect', () => {
    expect(decide(input(executing('reflect')))).toMatchObject({ action: 'reflect', row: 13 });
  });
  it('row 14: complete -> summarize', () => {
    expect(decide(input(state(phaseIs('complete'))))).toMatchObject({
      action: 'summarize',
      row: 14,
    });
  });
  it('no row matches -> escalate with row null', () => {
    const s = state((x) => {
      x.phase = 'needs_human';
      x.needs_human = {
        reason: 'r',
        code: 'CYCLE_STUCK',
        remediation: 'm',
        resume_phase: 'execute',
        at: '2026-01-29T04:00:00.000Z',
      };
    });
    expect(decide(input(s))).toMatchObject({ action: 'escalate', row: null });
  });
});

describe('seed 003 VALIDATE 3: nonce vectors', () => {
  it.each([
    ['abcdef0123456789', 'ABCDEF'],
    ['0f1e2d', '0F1E2D'],
    ['DEADBEEF', 'DEADBE'],
    ['cycle-001', 'C7D7EB'],
    ['run42-c7', '3F276E'],
    ['deadf-run001-auth01', '03A64B'],
    ['héllo-☃', '5B8CB6'],
    // Hex but shorter than six digits: hashed, so the nonce still has six.
    ['abc', 'BA7816'],
    ['0123', '1BE2E4'],
  ])('%s -> %s', (id, nonce) => {
    expect(deriveNonce(id)).toBe(nonce);
  });
  it('fresh cycle ids are hex, so their nonce is their first six digits, upper-cased', () => {
    const id = newCycleId();
    expect(id).toMatch(/^[0-9a-f]{16}$/);
    expect(deriveNonce(id)).toBe(id.slice(0, 6).toUpperCase());
  });
});

describe('seed 003 verify_task Stage 3: combined verdict, every row', () => {
  const yes: CriterionVerdict = { id: 'AC2', kind: 'answer', answer: 'YES', reason: 'ok' };
  const no: CriterionVerdict = { id: 'AC3', kind: 'answer', answer: 'NO', reason: 'missing' };
  const human: CriterionVerdict = { id: 'AC4', kind: 'answer', answer: 'NEEDS_HUMAN', reason: 'taste' };
  const garbled: CriterionVerdict = { id: 'AC5', kind: 'unparsable', error: 'line 1: no block' };
  it.each([
    ['FAIL | (not run) -> FAIL', { kind: 'ok', pass: false } as const, null, 'FAIL'],
    ['PASS | FAIL -> FAIL (conservative)', { kind: 'ok', pass: true } as const, [yes, no], 'FAIL'],
    ['PASS | NEEDS_HUMAN -> pause', { kind: 'ok', pass: true } as const, [yes, human], 'PAUSE'],
    ['PASS | PASS -> PASS', { kind: 'ok', pass: true } as const, [yes], 'PASS'],
    ['PASS | no LLM criteria -> PASS', { kind: 'ok', pass: true } as const, [], 'PASS'],
    [
      'PASS | parse failure after retry -> NEEDS_HUMAN',
      { kind: 'ok', pass: true } as const,
      [yes, garbled],
      'NEEDS_HUMAN',
    ],
    ['PASS | NO beats a parse failure', { kind: 'ok', pass: true } as const, [garbled, no], 'FAIL'],
    ['JSON invalid | (n/a) -> CYCLE_FAIL', { kind: 'invalid', reason: 'x' } as const, null, 'CYCLE_FAIL'],
  ])('%s', (_name, stage1, criteria, expected) => {
    expect(combineVerdict(stage1, criteria)).toBe(expected);
  });
});

describe('policy and agents defaults (seed 003)', () => {
  it('has the seed thresholds, the mode table and the model split', () => {
    expect(policy.escalation).toMatchObject({
      stuck_threshold: 3,
      max_retries: 3,
      budget_warn_fraction: 0.75,
    });
    expect(policy.modes.yolo).toMatchObject({
      track_complete: 'silent',
      new_track: 'silent',
      task_complete: 'silent',
      stuck: 'pause',
    });
    expect(policy.modes.hybrid).toMatchObject({
      track_complete: 'notify',
      new_track: 'ask',
      task_complete: 'silent',
    });
    expect(policy.modes.interactive).toMatchObject({
      new_track: 'ask',
      task_complete: 'ask',
      complete: 'summary',
    });
    expect(defaultAgents()).toEqual({
      planner: { provider: 'codex', model: 'gpt-5.2' },
      implementer: { provider: 'codex', model: 'gpt-5.2-codex' },
      verifier: { provider: 'claude', model: 'opus' },
    });
  });
  it('rejects unknown keys by name', () => {
    const r = cyclePolicySchema.safeParse({ escalation: { stuck_treshold: 2 } });
    expect(r.success).toBe(false);
  });
});

describe('rescue branch names', () => {
  it('ids git refuses in a ref are rewritten, valid ones kept', async () => {
    const { refSafe } = await import('../../source/engine/cycle/git-ops.js');
    expect(refSafe('rescue-20260101-ab12-T1.lock')).toBe('rescue-20260101-ab12-T1-lock');
    expect(refSafe('rescue-r-a..b')).toBe('rescue-r-a.b');
    expect(refSafe('rescue-r-T1.')).toBe('rescue-r-T1');
    expect(refSafe('rescue-r-a b~c^d:e?f*g[h\\i')).toBe('rescue-r-a-b-c-d-e-f-g-h-i');
    expect(refSafe('rescue-r-auth.v2')).toBe('rescue-r-auth.v2');
  });
});

describe('stage 2 evidence: the files a criterion names', () => {
  it('by path, by file name, or by the stem as a whole word', async () => {
    const { filesNamedBy } = await import('../../source/engine/cycle/actions/verify-task.js');
    const files = ['src/farewell.js', 'src/greet.js', 'tests/farewell.test.js', 'src/a.js'];
    expect(filesNamedBy('LLM: src/farewell.js exports a function', files)).toEqual(['src/farewell.js']);
    expect(filesNamedBy('LLM: the farewell module says goodbye', files)).toEqual([
      'src/farewell.js',
      'tests/farewell.test.js',
    ]);
    expect(filesNamedBy('LLM: greet.js is unchanged in spirit', files)).toEqual(['src/greet.js']);
    expect(filesNamedBy('LLM: the greeting is polite', files)).toEqual([]);
    expect(filesNamedBy('LLM: (a) is fine', files)).toEqual([]);
  });
});
