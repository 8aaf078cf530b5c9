import { spawn } from 'node:child_process';
import { afterAll, describe, expect, it } from 'vitest';
import { workflowView } from '../../source/engine/status/workflow-view.js';
import { freshWorkflow } from '../../source/engine/workflow/workflow-store.js';

// The newcomer's pass, defect 28: with a second `ralphy start` live at its resume question,
// `ralphy status` said "(interrupted)" next to "Lock: held by running pid N (ralphy start)".

// A real process that has ended: its pid is the workflow's dead owner (a crash, a kill -9).
const gone = spawn(process.execPath, ['-e', '']);
const exited = new Promise<void>((resolve) => gone.on('exit', () => resolve()));
afterAll(() => gone.kill());

async function interruptedWorkflow() {
  await exited;
  return {
    ...freshWorkflow({
      prdTitle: 'Greet script',
      now: new Date('2026-01-01T10:00:00Z'),
      maxAttempts: 3,
      engine: 'ticks',
      maxCostUsd: 50,
    }),
    state: 'AWAITING_QA_VALIDATION' as const,
    status: 'running' as const,
    pid: gone.pid ?? null,
  };
}

describe('ralphy status while another ralphy start holds the lock', () => {
  it('names the live start that took the interrupted workflow up, and where to answer it', async () => {
    const w = await interruptedWorkflow();
    const view = workflowView(w, new Date(), '/repo', { pid: process.pid, command: 'ralphy start' });
    expect(view.status).toBe('interrupted');
    expect(view.taken_up_by).toBe(`pid ${process.pid} (ralphy start)`);
    expect(view.next).toEqual([
      `answer it in the terminal where ralphy start runs (pid ${process.pid}), or ralphy abort`,
    ]);
  });

  it('says nothing of the kind with no lock, or a lock held by another command', async () => {
    const w = await interruptedWorkflow();
    expect(workflowView(w, new Date(), '/repo').taken_up_by).toBeNull();
    expect(workflowView(w, new Date(), '/repo').next).toEqual(['ralphy start resumes it (it asks first)']);
    expect(
      workflowView(w, new Date(), '/repo', { pid: process.pid, command: 'relais loop' }).taken_up_by,
    ).toBeNull();
  });

  it('a workflow whose own process holds the lock is running, not taken up', async () => {
    const w = { ...(await interruptedWorkflow()), pid: process.pid };
    const view = workflowView(w, new Date(), '/repo', { pid: process.pid, command: 'ralphy start' });
    expect(view.status).toBe('running');
    expect(view.taken_up_by).toBeNull();
  });
});
