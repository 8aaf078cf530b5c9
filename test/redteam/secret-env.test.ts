import { afterEach, describe, expect, it } from 'vitest';
import { TestProject, task } from '../support/project.js';

// The red team, hostile builder and hostile verification after secrets in the runner's
// environment. A verification is the project's own code, which a builder can edit: it has no
// network, but its output goes into the report and the next agent's prompt. A builder has the
// network (its model's API): a token it can read is a token it can send.

let project: TestProject;
afterEach(() => project?.dispose());

const PUBLISH = {
  NPM_TOKEN: 'LEAKED-npm-publish',
  CARGO_REGISTRY_TOKEN: 'LEAKED-cargo',
  TWINE_PASSWORD: 'LEAKED-pypi',
};
const MODEL_AND_CLOUD = {
  ANTHROPIC_API_KEY: 'LEAKED-anthropic',
  OPENAI_API_KEY: 'LEAKED-openai',
  AWS_SECRET_ACCESS_KEY: 'LEAKED-aws',
  AWS_SESSION_TOKEN: 'LEAKED-aws-session',
};
const names = (vars: Record<string, string>) => Object.keys(vars);
/** A node line that prints `$NAME=value` for each name it can see, on stdout. */
const printer = (vars: readonly string[]) =>
  `for (const n of ${JSON.stringify(vars)}) console.log(n + "=" + (process.env[n] ?? "unset"))`;

describe('red team: secrets in the environment', () => {
  it('a verification that prints the environment shows no model key, cloud key or publish token', () => {
    const all = [...names(PUBLISH), ...names(MODEL_AND_CLOUD)];
    project = TestProject.create({ 'src/a.ts': 'a\n' }, (c) => {
      c.verification.templates.push({
        id: 'env',
        cmd: 'node',
        args: ['-e', `${printer(all)}; process.exit(1)`],
      });
    });
    project.scenario({
      orchestrator: [{ result_json: task({ verification: { fast: ['env'], slow: [] } }) }],
      builder: [
        {
          actions: [{ write: 'src/a.ts', content: 'b\n' }],
          result_json: { summary: 'did it', files_intended: ['src/a.ts'], commands_ran: [], notes: [] },
        },
      ],
    });
    const run = project.cliSync(['run'], { ...PUBLISH, ...MODEL_AND_CLOUD });
    expect(project.report()).toMatchObject({ code: 'STOP_VERIFY_FAILED_FAST', sandbox: 'bwrap' });
    const log = project.report().verification.verify_log_path as string;
    const seen = `${run.stdout}${JSON.stringify(project.report())}${log ? project.read(log) : ''}`;
    // Not vacuous: the check did print, and said each was unset.
    for (const name of all) expect(seen).toContain(`${name}=unset`);

    expect(seen).not.toContain('LEAKED');
  });

  it('a builder reading publish tokens from its environment finds none, and keeps the model key it needs', () => {
    project = TestProject.create({ 'src/a.ts': 'a\n' });
    const want = [...names(PUBLISH), 'ANTHROPIC_API_KEY'];
    project.scenario({
      orchestrator: [{ result_json: task() }],
      builder: [
        {
          actions: [{ exec: ['sh', '-c', `node -e '${printer(want)}' > src/a.ts`] }],
          result_json: { summary: 'did it', files_intended: ['src/a.ts'], commands_ran: [], notes: [] },
        },
      ],
    });
    const run = project.cliSync(['run'], { ...PUBLISH, ANTHROPIC_API_KEY: 'model-key-the-agent-needs' });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(project.report()).toMatchObject({ code: 'SUCCESS', sandbox: 'bwrap' });
    const committed = project.git('show', 'HEAD:src/a.ts');
    for (const name of names(PUBLISH)) expect(committed).toContain(`${name}=unset`);
    expect(committed).toContain('ANTHROPIC_API_KEY=model-key-the-agent-needs');
  });
});
