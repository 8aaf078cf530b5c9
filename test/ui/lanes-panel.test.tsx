import { describe, expect, test } from 'vitest';
import type { EngineEvent } from '../../source/engine/events.js';
import { screenLayout } from '../../source/ui/layout/screen-layout.js';
import { Lanes } from '../../source/ui/panels/Lanes.js';
import { renderPanel, Script } from './helpers.js';

// Issue 19: the Lanes panel, fed by lane.changed, merge.changed and the lane-tagged events of
// each lane's tick.

const lane = (name: string, task: number, phase: string, extra: Partial<EngineEvent> = {}): EngineEvent =>
  ({
    type: 'lane.changed',
    lane: name,
    task,
    title: `Task ${task}`,
    phase,
    worktree: `/repo/relais/worktrees/${name}`,
    detail: null,
    cost_usd: 0,
    ...extra,
  }) as EngineEvent;

describe('Lanes panel', () => {
  test('one row per lane with its agent, tick step, last line, elapsed and cost; the merge queue under them', () => {
    const s = new Script()
      .emit([lane('task-1-1', 1, 'started'), lane('task-2-1', 2, 'started')], 1_000)
      .emit({
        type: 'agent.started',
        role: 'builder',
        attempt: 1,
        command: 'claude',
        model: 'm',
        lane: 'task-1-1',
      } as EngineEvent)
      .emit({ type: 'phase.changed', phase: 'BUILD', lane: 'task-1-1' } as EngineEvent)
      .emit({
        type: 'agent.output',
        role: 'builder',
        text: 'editing src/a.ts',
        kind: 'text',
        lane: 'task-1-1',
      } as EngineEvent)
      .emit(lane('task-2-1', 2, 'merging', { cost_usd: 0.25 }), 64_000)
      .emit({
        type: 'merge.changed',
        lane: 'task-2-1',
        step: 'checking',
        detail: null,
        waiting: ['task-2-1'],
      });
    const state = s.state;
    expect(state.lanes.rows.map((r) => [r.lane, r.phase, r.agent, r.tickPhase, r.lastLine])).toEqual([
      ['task-1-1', 'started', 'builder', 'BUILD', 'editing src/a.ts'],
      ['task-2-1', 'merging', null, null, null],
    ]);
    const frame = renderPanel(<Lanes state={state} width={90} height={8} />).frame();
    expect(frame).toContain('Lanes');
    expect(frame).toContain('2 running');
    expect(frame).toContain('task-1-1 started (builder build) · task 1 Task 1 · 01:05');
    expect(frame).toContain('editing src/a.ts');
    expect(frame).toContain('task-2-1 merging · task 2 Task 2');
    expect(frame).toContain('$0.25');
    expect(frame).toContain('merge queue: task-2-1 checking · waiting: task-2-1');
  });

  test('an ended lane stops its clock and shows why; a lane event of an unknown lane changes nothing', () => {
    const s = new Script()
      .emit(lane('task-1-1', 1, 'started'), 3_000)
      .emit(lane('task-1-1', 1, 'kept', { detail: 'merge_failed: conflict in src/a.ts' }), 60_000);
    const before = s.state;
    s.emit({
      type: 'agent.output',
      role: 'builder',
      text: 'x',
      kind: 'text',
      lane: 'task-9-1',
    } as EngineEvent);
    expect(s.state.lanes).toEqual(before.lanes);
    const frame = renderPanel(<Lanes state={s.state} width={90} height={6} />).frame();
    expect(frame).toContain('0 running');
    expect(frame).toContain('task-1-1 kept · task 1 Task 1 · 00:03');
    expect(frame).toContain('merge_failed: conflict in src/a.ts');
  });

  test('the layout gives the panel room only while lanes exist', () => {
    const none = screenLayout(new Script().state, 120, 40);
    const ids = (l: ReturnType<typeof screenLayout>) =>
      l.kind === 'panels' ? l.stack.flatMap((c) => c.panels.map((p) => p.id)) : [];
    expect(ids(none)).not.toContain('lanes');
    const some = screenLayout(new Script().emit(lane('task-1-1', 1, 'started')).state, 120, 40);
    expect(ids(some)).toContain('lanes');
  });
});
