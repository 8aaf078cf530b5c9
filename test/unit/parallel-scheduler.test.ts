import { describe, expect, it } from 'vitest';
import { type BudgetLimit, BudgetReservations } from '../../source/engine/parallel/reservations.js';
import { type SchedulableTask, schedule } from '../../source/engine/parallel/scheduler.js';
import { globsOverlap, scopesOverlap } from '../../source/engine/parallel/scope-overlap.js';
import { parseTasks } from '../../source/engine/workflow/tasks-file.js';

const t = (
  number: number,
  scope: string[] | null,
  dependsOn: number[] = [],
  status: SchedulableTask['status'] = 'pending',
): SchedulableTask => ({ number, scope, dependsOn, status });

describe('scope overlap (micromatch-aware, never "apart" when they can meet)', () => {
  it.each([
    ['src/a.ts', 'src/a.ts', true],
    ['src/a.ts', 'src/b.ts', false],
    ['src/**', 'src/deep/x.ts', true],
    ['src/**', 'src', true],
    ['src/auth/**', 'src/billing/**', false],
    ['src/*.ts', 'src/a.ts', true],
    ['src/*.ts', 'src/a.js', false],
    ['src/*.ts', 'src/deep/a.ts', false],
    ['**/*.md', 'docs/a.md', true],
    ['src/{a,b}.ts', 'src/b.ts', true],
    ['src/{a,b}.ts', 'src/c.ts', false],
    ['src/a*', 'src/*b', true],
    ['test/**', 'src/**', false],
  ])('%s vs %s → %s', (a, b, expected) => {
    expect(globsOverlap(a, b)).toBe(expected);
    expect(globsOverlap(b, a)).toBe(expected);
  });

  it('scopes overlap when any pair of their globs does', () => {
    expect(scopesOverlap(['src/a/**', 'test/a/**'], ['docs/**', 'test/**'])).toBe(true);
    expect(scopesOverlap(['src/a/**'], ['src/b/**', 'docs/**'])).toBe(false);
  });
});

describe('lane scheduler', () => {
  it('starts independent tasks up to the lane count, in file order', () => {
    const tasks = [t(1, ['src/a.ts']), t(2, ['src/b.ts']), t(3, ['src/c.ts'])];
    expect(schedule(tasks, [], 2).start).toEqual([1, 2]);
    expect(schedule(tasks, [], 1).start).toEqual([1]);
    expect(schedule(tasks, [1], 2).start).toEqual([2]);
    expect(schedule(tasks, [], 2).waiting.get(3)).toBe('all 2 lane(s) busy');
  });

  it('serialises overlapping scopes, and lets a later independent task pass', () => {
    const tasks = [t(1, ['src/**']), t(2, ['src/b.ts']), t(3, ['docs/**'])];
    const first = schedule(tasks, [], 3);
    expect(first.start).toEqual([1, 3]);
    expect(first.waiting.get(2)).toBe('scope overlaps task 1');
  });

  it('waits for dependencies to be completed', () => {
    const tasks = [t(1, ['a/**']), t(2, ['b/**'], [1]), t(3, ['c/**'], [2])];
    expect(schedule(tasks, [], 4).start).toEqual([1]);
    expect(schedule(tasks, [1], 4).waiting.get(2)).toBe('waits for task 1');
    const done = [t(1, ['a/**'], [], 'completed'), t(2, ['b/**'], [1]), t(3, ['c/**'], [2])];
    expect(schedule(done, [], 4).start).toEqual([2]);
  });

  it('a task without a declared scope runs alone', () => {
    const tasks = [t(1, ['src/a.ts']), t(2, null), t(3, ['src/c.ts'])];
    expect(schedule(tasks, [], 4).start).toEqual([1, 3]);
    expect(schedule(tasks, [1, 3], 4).waiting.get(2)).toMatch(/runs alone/);
    const alone = [t(1, null), t(2, ['src/b.ts'])];
    expect(schedule(alone, [], 4).start).toEqual([1]);
    expect(schedule(alone, [1], 4).waiting.get(2)).toBe('task 1 declares no scope and runs alone');
  });

  it('an in_progress task (a resumed run) is scheduled again; completed ones never', () => {
    const tasks = [t(1, ['a'], [], 'completed'), t(2, ['b'], [], 'in_progress')];
    expect(schedule(tasks, [], 2).start).toEqual([2]);
  });
});

describe('budget reservations across lanes', () => {
  const usd = (cap: number, spent: number): BudgetLimit => ({
    setting: 'workflow.max_cost_usd',
    reason: 'budget_exhausted',
    unit: 'usd',
    cap,
    spent,
  });
  const $ = (amount: number, calls = 0) => ({ usd: amount, calls });

  it('two lanes never reserve past the cap together, whatever they later report', () => {
    const budget = new BudgetReservations([usd(10, 2)]);
    expect(budget.tryReserve('a', $(4))).toBe(true);
    expect(budget.tryReserve('b', $(4))).toBe(true);
    // 2 spent + 8 reserved: a third worst case does not fit.
    expect(budget.tryReserve('c', $(0.5))).toBe(false);
    expect(budget.hopeless($(0.5))).toBeNull();
    budget.settle('a', $(1));
    expect(budget.tryReserve('c', $(3))).toBe(true);
    expect(budget.reserved.usd).toBe(7);
    // 3 spent + 7 reserved: the cap, exactly.
    expect(budget.tryReserve('d', $(0.01))).toBe(false);
  });

  it('a worst case that can never fit is hopeless once nothing is held, naming the cap', () => {
    const budget = new BudgetReservations([usd(5, 4.5)]);
    expect(budget.tryReserve('a', $(1))).toBe(false);
    expect(budget.hopeless($(1))).toEqual({
      reason: 'budget_exhausted',
      detail:
        'one more worst-case tick ($1.00) does not fit beside the $4.50 spent under workflow.max_cost_usd $5.00',
    });
  });

  it('a waiting lane wakes when another lane settles', async () => {
    const budget = new BudgetReservations([usd(5, 0)]);
    budget.tryReserve('a', $(5));
    const woken = budget.nextSettle(new AbortController().signal);
    budget.settle('a', $(0.2));
    await woken;
    expect(budget.tryReserve('b', $(4.8))).toBe(true);
  });

  it('no cap: everything fits', () => {
    const budget = new BudgetReservations([]);
    expect(budget.tryReserve('a', $(1e6, 1e6))).toBe(true);
  });

  // Issue 18 + 19: the IMPLEMENTATION phase's own caps are reserved against too, in their unit.
  it('a per-phase call cap holds across lanes, beside a roomy workflow cap', () => {
    const calls: BudgetLimit = {
      setting: 'workflow.phases.implementation.max_calls',
      reason: 'phase_budget_exhausted',
      unit: 'calls',
      cap: 7,
      spent: 1,
    };
    const budget = new BudgetReservations([usd(100, 0), calls]);
    expect(budget.tryReserve('a', $(1, 3))).toBe(true);
    // 1 made + 3 held + 3 more = 7: fits; one more lane would make 10.
    expect(budget.tryReserve('b', $(1, 3))).toBe(true);
    expect(budget.tryReserve('c', $(1, 3))).toBe(false);
    budget.settle('a', $(0.5, 2));
    budget.settle('b', $(0.5, 2));
    // 5 made: a worst case of 3 can never fit again, and the phase cap is named.
    expect(budget.tryReserve('c', $(1, 3))).toBe(false);
    expect(budget.hopeless($(1, 3))).toEqual({
      reason: 'phase_budget_exhausted',
      detail:
        'one more worst-case tick (3 agent calls) does not fit beside the 5 made under workflow.phases.implementation.max_calls 7',
    });
  });
});

describe('TASKS.md dependencies and scope', () => {
  const file = (extra: string) =>
    `## Task 1: One\n- **Status**: pending\n- **Scope**: src/a/**, test/a/**\n\n## Task 2: Two\n- **Status**: pending\n${extra}\n`;

  it('reads Depends on and Scope, with defaults when absent', () => {
    const parsed = parseTasks(file('- **Depends on**: Task 1'));
    expect(parsed.ok && parsed.tasks.map((x) => [x.dependsOn, x.scope])).toEqual([
      [[], ['src/a/**', 'test/a/**']],
      [[1], null],
    ]);
    const none = parseTasks(file('- **Depends on**: none'));
    expect(none.ok && none.tasks[1]?.dependsOn).toEqual([]);
  });

  it('refuses unknown, self, looping and malformed dependencies, and an empty scope', () => {
    expect(parseTasks(file('- **Depends on**: 7'))).toEqual({
      ok: false,
      problems: ['task 2 depends on task 7, which does not exist'],
    });
    expect(parseTasks(file('- **Depends on**: 2'))).toEqual({
      ok: false,
      problems: ['task 2 depends on itself'],
    });
    const loop = parseTasks(
      file('- **Depends on**: 1').replace(
        '- **Scope**: src/a/**',
        '- **Depends on**: 2\n- **Scope**: src/a/**',
      ),
    );
    expect(loop.ok).toBe(false);
    expect(!loop.ok && loop.problems[0]).toMatch(/^dependencies loop: task \d → task \d → task \d$/);
    const bad = parseTasks(file('- **Depends on**: the first one'));
    expect(!bad.ok && bad.problems[0]).toMatch(/"Depends on" names "the", not a task number/);
    const empty = parseTasks(file('- **Scope**: ,'));
    expect(!empty.ok && empty.problems[0]).toMatch(/"Scope" names no glob/);
  });
});
