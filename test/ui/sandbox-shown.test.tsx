import { describe, expect, test } from 'vitest';
import type { EngineEvent } from '../../source/engine/events.js';
import { blastRows } from '../../source/ui/panels/BlastRadius.js';
import { finalResult } from '../../source/ui/store/selectors.js';
import { Script } from './helpers.js';

// The Blast radius panel and a tick's result say which sandbox the tick ran in, when the engine
// says (issue 14's `sandbox` field); without the field they say nothing about it.

const judged = {
  type: 'judge.finished',
  code: null,
  blast_radius: { files_touched: 1, lines_added: 3, lines_deleted: 0, new_files: 0 },
  blast_radius_line: '1 file',
  violations: [],
  touched_paths: ['src/a.ts'],
};
const finished = {
  type: 'tick.finished',
  run_id: 'r1',
  verdict: 'success',
  code: 'SUCCESS',
  remediation: '',
  detail: null,
  blast_radius_line: '1 file',
  commit: 'abc1234',
  report_path: null,
};

const words = (s: Script) =>
  blastRows(s.state)
    .flat()
    .map((seg) => ('text' in seg ? seg.text : ''))
    .join(' ');

describe('the sandbox a tick ran in', () => {
  test('named when the engine says, for each kind', () => {
    for (const [sandbox, said] of [
      ['bwrap', 'sandbox: bwrap'],
      ['off', 'sandbox: off'],
      ['unavailable', 'sandbox: unavailable'],
    ] as const) {
      const s = new Script('loop').emit([
        { ...judged, sandbox } as EngineEvent,
        { ...finished, sandbox } as EngineEvent,
      ]);
      expect(words(s)).toContain(said);
      s.store.setInteraction({ over: true });
      expect(finalResult(s.state)?.lines.join('\n')).toContain(said);
    }
  });

  test('absent, null or unknown: nothing is claimed', () => {
    for (const extra of [{}, { sandbox: null }, { sandbox: 'docker' }]) {
      const s = new Script('loop').emit([
        { ...judged, ...extra } as EngineEvent,
        { ...finished, ...extra } as EngineEvent,
      ]);
      expect(words(s)).not.toContain('sandbox');
      s.store.setInteraction({ over: true });
      expect(finalResult(s.state)?.lines.join('\n')).not.toContain('sandbox');
    }
  });
});
