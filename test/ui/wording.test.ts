import { describe, expect, test } from 'vitest';
import { gateOutcome, tickHeadline, tickStepLabel } from '../../source/ui/format/wording.js';
import { outputLinesOf } from '../../source/ui/store/output-lines.js';
import { finalResult, phaseLabel } from '../../source/ui/store/selectors.js';
import { Script } from './helpers.js';

// Issue 16 item 8: each wording fault named there, checked where it showed.
describe('wording', () => {
  test('a successful tick says SUCCESS once, a stop names its code', () => {
    expect(tickHeadline('success', 'SUCCESS')).toBe('Tick succeeded');
    expect(tickHeadline('stop', 'STOP_VERIFY_FAILED_FAST')).toBe('Tick stopped: STOP_VERIFY_FAILED_FAST');
    const s = new Script('loop').emit({
      type: 'tick.finished',
      run_id: 'r1',
      verdict: 'success',
      code: 'SUCCESS',
      remediation: '',
      detail: null,
      blast_radius_line: '1 file',
      commit: 'abc1234',
      report_path: null,
    });
    s.store.setInteraction({ over: true });
    const headline = finalResult(s.state)?.headline ?? '';
    expect(headline).toBe('Tick succeeded');
    expect(headline).not.toMatch(/SUCCESS SUCCESS/);
  });

  test('gate outcomes: --yes is named, nobody decides nothing, Esc at a question is a decline', () => {
    const logged = (gate: 'spec' | 'plan', decision: 'approve' | 'reject', by: 'human' | 'auto' | 'nobody') =>
      outputLinesOf({
        type: 'gate.resolved',
        gate,
        decision,
        by,
        answer: null,
        at: new Date(0).toISOString(),
      }).map((l) => l.text);
    expect(logged('spec', 'approve', 'auto')).toEqual(['spec gate: approved by --yes']);
    expect(logged('spec', 'reject', 'nobody')).toEqual(['spec gate: nobody could answer']);
    expect(logged('plan', 'reject', 'human')).toEqual(['planner question: declined']);
    expect(logged('spec', 'reject', 'human')).toEqual(['spec gate: rejected']);
    for (const line of [...logged('plan', 'reject', 'nobody'), ...logged('spec', 'approve', 'auto')])
      expect(line).not.toMatch(/\((auto|nobody)\)/);
    expect(gateOutcome('qa', 'approve', 'human', 'qa')).toBe('qa: approved');
    // A human's reason for a "no" is logged with it.
    const withReason = outputLinesOf({
      type: 'gate.resolved',
      gate: 'qa',
      decision: 'reject',
      by: 'human',
      answer: 'no tests for b.ts',
      at: new Date(0).toISOString(),
    });
    expect(withReason.map((l) => l.text)).toEqual(['QA gate: rejected: no tests for b.ts']);
  });

  test('the header names the workflow phase, and the tick step in words of its own', () => {
    expect(tickStepLabel(3, 'BUILD')).toBe('tick 3, step BUILD');
    const s = new Script('workflow').emit([
      { type: 'workflow.changed', state: 'IMPLEMENTATION', status: 'running', reason: null, detail: null },
      { type: 'phase.changed', phase: 'BUILD' },
    ]);
    expect(phaseLabel(s.state)).toBe('IMPLEMENTATION · tick 1, step BUILD');
  });
});
