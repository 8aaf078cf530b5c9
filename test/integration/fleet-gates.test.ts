import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { COSTS, type FleetProject, fleetProject, prCreates, until } from '../support/fleet.js';
import { FleetHarness } from '../support/fleet-harness.js';
import { answer, ask, close, proceedGate, ready } from '../support/planner.js';
import { qaStep } from '../support/workflow.js';

// Issue 20, durable gates: every gate of a fleet run waits in the database (a DBOS recv), not in
// a process: the planner's questions, an agent's question, the spec and QA gates. Answered from
// any machine (relais approve) or by a comment on the run's GitHub issue (gh), it survives the
// death of the worker that asked. REAL PostgreSQL and worker processes of the built CLI; the
// agents are the scripted fake-claude; GitHub is a recording gh stand-in. `npm run build` first.

const fleet = new FleetHarness();
beforeAll(() => fleet.setUp());
afterAll(() => fleet.tearDown());

const Q1 = 'Should greet() use the full name or only the first name?';

const scenarioOf = (project: FleetProject) => JSON.parse(readFileSync(project.scenarioPath, 'utf8'));

async function approve(db: string, runId: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  const done = await fleet.cli(['approve', runId, ...args, '--db', db], env);
  expect(done.code, done.stderr).toBe(0);
  return done.stdout;
}

describe('fleet gates', () => {
  it("the planner's questions wait in the database; the worker dies while one waits; the answer, given with no worker alive, reaches the planner on another worker", async () => {
    const db = fleet.postgres.database('planner');
    const project = fleet.track(
      fleetProject({ configure: (config) => (config.planner = { ...config.planner, enabled: true }) }),
    );
    project.scenario({
      ...scenarioOf(project),
      planner: [
        answer(ask('reporter', [{ q: Q1 }])),
        answer(close(1, 'answered', 'only the first name'), proceedGate()),
        answer(ready('Greet by the first name only.', [1])),
      ],
    });
    const env = fleet.workerEnv(project, {
      RELAIS_FLEET_HEARTBEAT_MS: '300',
      RELAIS_FLEET_DEAD_AFTER_MS: '3000',
    });
    const first = fleet.startWorker(db, 'plan-a', env, 1);
    const runId = await fleet.submit(db, [project.remote], env);

    const question = await fleet.gateOf(db, runId, 'plan');
    expect(question).toMatchObject({ answer: 'text', title: 'Planner, round 1: 1 open question' });
    expect(question.lines.join('\n')).toContain(Q1);
    const status = JSON.parse((await fleet.cli(['fleet', 'status', '--db', db, '--json'], env)).stdout);
    expect(status.waitingGates).toEqual([
      { run_id: runId, gate: 'plan', title: question.title, answer: 'text' },
    ]);
    // A yes/no answer to a question is refused with the way to answer it.
    const wrong = await fleet.cli(['approve', runId, '--no', '--answer', 'x', '--db', db], env);
    expect(wrong.code).toBe(2);

    first.signal('SIGKILL');
    await first.done;
    expect(await approve(db, runId, env, '--answer', 'Only the first name.')).toContain(
      `Answered the plan gate of ${runId}`,
    );
    // Another machine's worker (another id) takes the dead one's run over and goes on from the wait.
    const second = fleet.startWorker(db, 'plan-b', env, 1);
    const proceed = await fleet.gateOf(db, runId, 'plan', question.id);
    expect(proceed.title).toBe('Planner: enough to draft the spec. Proceed?');
    // --yes on a question: go on without an answer (the planner proceeds under its assumptions).
    await approve(db, runId, env, '--yes');
    await fleet.gateOf(db, runId, 'spec', proceed.id);
    await approve(db, runId, env, '--yes');
    await fleet.gateOf(db, runId, 'qa');
    await approve(db, runId, env, '--yes');
    expect(await fleet.result(db, runId)).toMatchObject({ status: 'completed', state: 'COMPLETED' });

    const planner = project.calls().filter((c) => c.role === 'planner');
    expect(planner).toHaveLength(3);
    expect(planner[1]?.prompt).toContain('Only the first name.');
    expect(planner[2]?.prompt).toContain('proceed (the human chose to go on without answering)');
    expect(project.calls().find((c) => c.role === 'spec')?.prompt).toContain('Greet by the first name only.');
    const takeover = await fleet.query<{ taken_over_by: string }>(
      db,
      "SELECT taken_over_by FROM relais_fleet.workers WHERE executor_id = 'plan-a'",
    );
    expect(takeover).toEqual([{ taken_over_by: 'plan-b' }]);
    second.signal('SIGTERM');
    expect((await second.done).code).toBe(0);
  }, 300_000);

  it("an agent's question waits for relais approve --answer, which reaches its next run; a QA report rejected with --no --reason is written again with that reason", async () => {
    const db = fleet.postgres.database('question');
    const project = fleet.track(fleetProject());
    const scenario = scenarioOf(project);
    const QUESTION = 'Should greet() trim the name before greeting?';
    project.scenario({
      ...scenario,
      dev: [
        { result: `I have a question before I write code.\n\n${QUESTION}`, cost: COSTS.dev },
        ...scenario.dev.slice(1),
      ],
      qa: [0, 1].map(() => ({ ...qaStep(), cost: COSTS.qa })),
    });
    const env = fleet.workerEnv(project);
    const worker = fleet.startWorker(db, 'question-worker', env, 1);
    const runId = await fleet.submit(db, [project.remote], env);

    await fleet.gateOf(db, runId, 'spec');
    // The spec gate is yes or no: a typed answer is refused, and says how to answer.
    const typed = await fleet.cli(['approve', runId, '--answer', 'sure', '--db', db], env);
    expect(typed.code).toBe(1);
    expect(typed.stderr).toContain(`relais approve ${runId} --yes, or --no --reason`);
    await approve(db, runId, env, '--yes');

    const asked = await fleet.gateOf(db, runId, 'input');
    expect(asked.title).toBe('dev-agent needs input');
    expect(asked.lines.join('\n')).toContain(QUESTION);
    await approve(db, runId, env, '--answer', 'Yes, trim it.');

    const firstQa = await fleet.gateOf(db, runId, 'qa');
    const devPrompts = project
      .calls()
      .filter((c) => c.role === 'dev')
      .map((c) => c.prompt);
    expect(devPrompts).toHaveLength(2);
    expect(devPrompts[1]).toContain(`You asked: ${QUESTION}`);
    expect(devPrompts[1]).toContain('The human answered: Yes, trim it.');

    await approve(db, runId, env, '--no', '--reason', 'Say what happens with an empty name.');
    // The QA agent runs again with the reason, and its new report waits at the QA gate.
    await fleet.gateOf(db, runId, 'qa', firstQa.id);
    expect(project.calls().filter((c) => c.role === 'qa')[1]?.prompt).toContain(
      'Say what happens with an empty name.',
    );
    await approve(db, runId, env, '--yes');
    expect(await fleet.result(db, runId)).toMatchObject({ status: 'completed', state: 'COMPLETED' });
    expect(prCreates(project)).toHaveLength(1);
    worker.signal('SIGTERM');
    expect((await worker.done).code).toBe(0);
  }, 300_000);

  it("a run from a GitHub issue announces its gates on the issue and takes its answers from collaborators' /relais comments, nobody else's", async () => {
    const db = fleet.postgres.database('github');
    const project: FleetProject = fleet.track(
      fleetProject({
        configure: (config) => (config.planner = { ...config.planner, enabled: true }),
        issue: {
          title: 'Greeting service',
          body: 'We need greet(name) and bye(name) for the front desk.',
          author: { login: 'pm' },
          assignees: [{ login: 'dev' }],
        },
      }),
    );
    const thread = project.thread as NonNullable<FleetProject['thread']>;
    const scenario = scenarioOf(project);
    project.scenario({
      ...scenario,
      planner: [
        answer(ask('reporter', [{ q: Q1 }])),
        answer(close(1, 'answered', 'the full name'), proceedGate()),
        answer(ready('greet(name) and bye(name), with the full name.', [1])),
      ],
    });
    // The issue is planned where a human works: `relais plan --issue` in a checkout, as locally.
    const env = fleet.workerEnv(project);
    const plan = () => project.cliSync(['plan', '--issue', '12'], { IS_SANDBOX: '1' });
    expect(plan().code).toBe(0);
    thread.comment('pm', '1: the full name, always.');
    expect(plan().code).toBe(0);
    thread.comment('pm', 'Ship it.');
    expect(plan().stdout).toContain('Issue #12: ready for the spec.');

    const worker = fleet.startWorker(db, 'github-worker', env, 1);
    const runId = await fleet.submit(db, [project.remote, '--issue', '12'], env, project.root);
    const spec = await fleet.gateOf(db, runId, 'spec');
    await until(db, 'SELECT 1', () =>
      thread.posted().some((b) => b.includes(`\`${runId}\` waits at its spec gate`)),
    );
    const announced = thread.posted().find((b) => b.includes('waits at its spec gate')) as string;
    expect(announced).toContain('`/relais approve` or `/relais reject <reason>`');

    // Someone without access to the repository is not heard, however it is phrased.
    thread.comment('mallory', '/relais approve', 'NONE');
    const reads = () =>
      thread.calls().filter((c) => c.args.join(' ') === 'issue view 12 --json comments').length;
    const seen = reads();
    await until(db, 'SELECT 1', () => reads() > seen + 1);
    const still = await fleet.gateOf(db, runId, 'spec');
    expect(still.id).toBe(spec.id);
    thread.comment('dev', 'Looks right to me.\n/relais approve', 'COLLABORATOR');
    await until(db, 'SELECT 1', () => reads() > seen + 3);
    expect((await fleet.gateOf(db, runId, 'spec')).id, 'a command must open the comment').toBe(spec.id);
    thread.comment('dev', '/relais approve', 'COLLABORATOR');
    const firstQa = await fleet.gateOf(db, runId, 'qa');
    thread.comment('pm', '/relais reject Cover the empty name in the report.', 'OWNER');
    const qaAgain = await fleet.gateOf(db, runId, 'qa', firstQa.id);
    expect(project.calls().filter((c) => c.role === 'qa')[1]?.prompt).toContain(
      'Cover the empty name in the report.',
    );
    const qaAnnouncements = () => thread.posted().filter((b) => b.includes('waits at its qa gate')).length;
    await until(db, 'SELECT 1', () => qaAnnouncements() === 2);
    thread.comment('pm', '/relais approve', 'OWNER');
    expect(await fleet.result(db, runId)).toMatchObject({ status: 'completed', state: 'COMPLETED' });
    expect(qaAgain.gate).toBe('qa');
    // The spec came from the planned issue, and the run reported back on it at the end.
    expect(project.calls().find((c) => c.role === 'spec')?.prompt).toContain(
      '=== PRD (GitHub issue #12, as planned) ===',
    );
    expect(thread.posted().at(-1)).toContain('Ralphy finished the workflow for this issue.');
    const decisions = JSON.parse(
      (await fleet.query<{ workflow_json: string }>(db, 'SELECT workflow_json FROM relais_fleet.runs'))[0]
        ?.workflow_json as string,
    ).gate_decisions as Array<{ gate: string; decision: string; by: string }>;
    const answered = decisions.filter((d) => d.decision !== 'unanswered' && d.gate !== 'resume');
    expect(answered.map((d) => [d.gate, d.decision, d.by])).toEqual([
      ['spec', 'approve', 'human'],
      ['qa', 'reject', 'human'],
      ['qa', 'approve', 'human'],
    ]);
    worker.signal('SIGTERM');
    expect((await worker.done).code).toBe(0);
  }, 300_000);
});
