import { expect } from 'vitest';
import { builderWrites, type TestProject, task } from './project.js';

/** One `relais run` whose builder edits src/a.ts in scope: it must commit (SUCCESS). Its stdout. */
export function successfulTick(p: TestProject): string {
  p.scenario({
    orchestrator: [{ result_json: task() }],
    builder: [builderWrites({ 'src/a.ts': `changed ${Date.now()}\n` })],
  });
  const run = p.cliSync(['run']);
  expect(run.code, run.stdout + run.stderr).toBe(0);
  expect(p.report().code).toBe('SUCCESS');
  return run.stdout;
}
