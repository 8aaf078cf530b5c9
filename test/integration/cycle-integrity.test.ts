import { execFileSync } from 'node:child_process';
import { linkSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type Answer,
  CycleRepo,
  type Handler,
  plan,
  scripted,
  spec,
  track,
  verdict,
  writes,
} from '../support/cycle-project.js';

// Issue 14's git integrity in the cycle engine (seed 003), as in a tick: around the implementer
// and around stage 1's checks, existing objects stay intact (else the cycle waits for a human),
// refs the run made or moved are put back, files git cannot judge are removed, and the verdict
// is about the committed tree (a tracked file rewritten while the tests ran fails them). The
// agents are scripted in-process and write directly: the judge is the fence under test. Stage 1's
// checks run in the sandbox, as a user's do, except the tests that write into .git/ (a tag, a
// damaged object), which the sandbox refuses: those run with it off to prove the judge.

let repo: CycleRepo;
afterEach(() => repo?.dispose());

const GOOD = "module.exports = (name) => 'Hello, ' + name;\n// greeted\n";

async function atImplement() {
  repo = await CycleRepo.create();
  const agents = scripted({ planner: [track(), spec(), plan([{ id: 'T1' }])] });
  await repo.cycles(agents.runners, (o) => o.action === 'generate_task', 6);
}

const refs = () => repo.git('for-each-ref', '--format=%(refname) %(objectname)');
const git = (cwd: string, ...args: string[]) => execFileSync('git', args, { cwd, stdio: 'ignore' });

/** The implementer's real change, plus `extra`. */
const tampering =
  (extra: (cwd: string) => void): Handler =>
  (r, cwd): Answer => {
    writes({ 'src/greet.js': GOOD })(r, cwd);
    extra(cwd);
    return 'Implemented.';
  };

describe('around the implementer', () => {
  it('branches and tags it made or moved are put back, and the attempt fails', async () => {
    await atImplement();
    repo.git('branch', 'keep');
    repo.git('tag', 'v1', 'HEAD~1');
    const before = refs();
    const head = repo.head();
    const out = await repo.cycle(
      scripted({
        implementer: [
          tampering((cwd) => {
            git(cwd, 'branch', 'evil');
            git(cwd, 'tag', '-f', 'v1', 'HEAD');
            git(cwd, 'branch', '-D', 'keep');
          }),
        ],
      }).runners,
    );
    expect(out).toMatchObject({
      action: 'implement_task',
      reply: 'CYCLE_FAIL',
      code: 'CYCLE_PROTECTED_CHANGED',
    });
    expect(out.details).toContain('refs ');
    expect(out.details).toContain('refs/heads/evil');
    expect(out.details).toContain('(put back)');
    // refs/stash holds the attempt's work, kept aside on purpose; every other ref is as it was.
    expect(
      refs()
        .split('\n')
        .filter((l) => !l.startsWith('refs/stash'))
        .join('\n'),
    ).toBe(before);
    expect(repo.head()).toBe(head);
    expect(repo.status()).toBe('');
  });

  it('a FIFO and a hard link to a file outside the repository are removed, and the attempt fails', async () => {
    await atImplement();
    const outside = join(repo.base, 'outside.txt');
    writeFileSync(outside, 'outside\n');
    const out = await repo.cycle(
      scripted({
        implementer: [
          tampering((cwd) => {
            execFileSync('mkfifo', [join(cwd, 'src/pipe')]);
            linkSync(outside, join(cwd, 'src/linked.txt'));
          }),
        ],
      }).runners,
    );
    expect(out).toMatchObject({ code: 'CYCLE_PROTECTED_CHANGED' });
    expect(out.details).toContain('FIFO in the tree: src/pipe');
    expect(out.details).toContain('hard link: src/linked.txt');
    expect(repo.exists('src/pipe')).toBe(false);
    expect(repo.exists('src/linked.txt')).toBe(false);
    expect(readFileSync(outside, 'utf8')).toBe('outside\n');
    expect(repo.status()).toBe('');
  });

  it('an existing object it damaged pauses the cycle for a human (CYCLE_GIT_OBJECT_CORRUPTED): nothing is committed', async () => {
    await atImplement();
    const blob = repo.git('rev-parse', 'HEAD:specs/VISION.md').trim();
    const head = repo.head();
    const out = await repo.cycle(
      scripted({
        implementer: [
          tampering((cwd) => {
            const file = join(cwd, '.git/objects', blob.slice(0, 2), blob.slice(2));
            execFileSync('chmod', ['u+w', file]);
            writeFileSync(file, 'garbage');
          }),
        ],
      }).runners,
    );
    expect(out).toMatchObject({ code: 'CYCLE_GIT_OBJECT_CORRUPTED', phase: 'needs_human' });
    expect(out.details).toContain(`object ${blob} was changed`);
    expect(repo.head()).toBe(head);
    expect(repo.state().needs_human?.remediation ?? JSON.stringify(repo.state())).toContain(
      'git fsck --full',
    );
  });

  it('a commit the implementer makes on its own branch is its work, not a ref to put back', async () => {
    await atImplement();
    const out = await repo.cycle(
      scripted({
        implementer: [
          tampering((cwd) => {
            git(cwd, 'add', 'src/greet.js');
            git(cwd, 'commit', '-qm', 'agent commit');
          }),
        ],
      }).runners,
    );
    expect(out).toMatchObject({ action: 'implement_task', reply: 'CYCLE_OK' });
    expect(repo.subjects()[0]).toBe('agent commit');
  });
});

describe('around stage 1 (the checks run on the committed tree)', () => {
  async function atVerify(testFile: string, sandbox: 'off' | 'bwrap' = 'bwrap') {
    await atImplement();
    repo.config = { ...repo.config, sandbox };
    await repo.cycle(
      scripted({ implementer: [writes({ 'src/greet.js': GOOD, 'tests/evil.test.js': testFile })] }).runners,
    );
    expect(repo.state().task.sub_step).toBe('verify');
    const { runners, calls } = scripted({ verifier: verdict('YES') });
    const out = await repo.cycle(runners);
    return { out, calls };
  }

  it('a test that rewrites a tracked file and puts it back fails verification: the tests ran on other bytes', async () => {
    const { out, calls } = await atVerify(
      "const fs = require('fs'); const was = fs.readFileSync('src/greet.js'); fs.writeFileSync('src/greet.js', 'module.exports = () => 1;\\n'); fs.writeFileSync('src/greet.js', was);\n",
    );
    expect(out).toMatchObject({ action: 'verify_task', reply: 'CYCLE_FAIL', code: 'CYCLE_VERIFY_FAILED' });
    expect(out.details).toContain('git_clean: rewritten while the checks ran: src/greet.js');
    expect(calls).toEqual([]);
    expect(repo.status()).toBe('');
  });

  it('a tag a test made is put back and fails the paths check', async () => {
    const { out } = await atVerify(
      "require('child_process').execFileSync('git', ['tag', 'planted']);\n",
      'off',
    );
    expect(out).toMatchObject({ code: 'CYCLE_VERIFY_FAILED' });
    expect(out.details).toContain('paths: the test or lint run changed refs refs/tags/planted (put back)');
    expect(refs()).not.toContain('refs/tags/planted');
  });

  it('in the sandbox the same tag cannot even be made (.git is read-only): the test run fails', async () => {
    const { out } = await atVerify(
      "require('child_process').execFileSync('git', ['tag', 'planted'], { stdio: 'ignore' });\n",
    );
    expect(out).toMatchObject({ code: 'CYCLE_VERIFY_FAILED' });
    expect(out.details).toContain('tests: test exited 1');
    expect(out.details).not.toContain('refs/tags/planted');
    expect(refs()).not.toContain('refs/tags/planted');
  });

  it('a test that damages an existing object pauses the cycle for a human', async () => {
    const { out } = await atVerify(
      "const fs = require('fs'); const { execFileSync } = require('child_process'); const blob = execFileSync('git', ['rev-parse', 'HEAD:specs/VISION.md']).toString().trim(); const f = '.git/objects/' + blob.slice(0, 2) + '/' + blob.slice(2); fs.chmodSync(f, 0o644); fs.writeFileSync(f, 'garbage');\n",
      'off',
    );
    expect(out).toMatchObject({ code: 'CYCLE_GIT_OBJECT_CORRUPTED', phase: 'needs_human' });
  });
});
