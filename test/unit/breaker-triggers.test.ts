import { describe, expect, it } from 'vitest';
import { configSchema } from '../../source/engine/protocol/config.js';
import { breakerFrom, testCommandOf } from '../../source/engine/supervise/breaker-settings.js';
import {
  type BreakerConfig,
  CircuitBreaker,
  isErrorLine,
} from '../../source/engine/supervise/circuit-breaker.js';
import { TEST_BREAKER } from '../support/agent-fakes.js';
import { FakeClock } from '../support/fake-clock.js';

// Seed 002 §6.1, the triggers' edges: which lines are errors, the 10-line window of the
// repeated-error hash, the hash ignoring timestamps and line numbers, the special cases' thresholds
// (PR phase, the test command taken from the verification templates).

const CONFIG = TEST_BREAKER;

function breaker(overrides: Partial<BreakerConfig> = {}) {
  const clock = new FakeClock();
  return { clock, breaker: new CircuitBreaker({ ...CONFIG, ...overrides }, () => clock.now()) };
}

/** Feeds lines; the index (0-based) of each line that triggered. */
function feed(b: CircuitBreaker, lines: string[]): number[] {
  return lines.flatMap((line, i) => (b.onOutput(line)?.trigger === 'repeated_error' ? [i] : []));
}

describe('repeated error: what an error line is', () => {
  it.each([
    "TypeError: Cannot read properties of undefined (reading 'x')",
    'AssertionError [ERR_ASSERTION]: Expected values to be strictly equal',
    'npm ERR! code ELIFECYCLE',
    "Error: ENOENT: no such file or directory, open 'a.json'",
    'spawn git ENOENT',
    "code: 'ERR_MODULE_NOT_FOUND'",
    'FAIL src/x.test.ts',
    'ModuleNotFoundError: No module named foo',
    'java.lang.NullPointerException',
    'panic: runtime error: index out of range',
    'src/a.ts(3,5): error TS2322: Type string is not assignable to type number.',
    'Tests: 1 failed, 2 passed, 3 total',
    'bash: foo: command not found',
  ])('counts %j', (line) => {
    expect(isErrorLine(line)).toBe(true);
    const { breaker: b } = breaker();
    expect(feed(b, [line, line, line])).toEqual([2]);
  });

  it.each([
    'Found 0 errors.',
    '0 errors, 0 warnings',
    'No errors found',
    'no failures',
    'Tests: 0 failed, 3 passed, 3 total',
    'compiled without errors',
    'Everything is fine, enough said',
    'EXIT_SIGNAL: true',
    // Tool-call lines naming files are not errors.
    'Edit /repo/src/errors.ts',
    'Read src/handleError.ts',
    'Edit test/fail.test.ts',
    'Read lib/exceptions.py',
  ])('does not count %j', (line) => {
    expect(isErrorLine(line)).toBe(false);
    const { breaker: b } = breaker();
    expect(feed(b, [line, line, line, line])).toEqual([]);
  });
});

describe('repeated error: the last 10 lines', () => {
  const error = "Error: Cannot find module 'foo'";
  const other = (n: number) => `working on step ${'abcdefghijklmnop'[n]}`;

  it('three copies within 10 lines trigger (first and third 9 lines apart)', () => {
    const { breaker: b } = breaker();
    const lines = [error, other(1), other(2), other(3), error, other(5), other(6), other(7), other(8), error];
    expect(lines).toHaveLength(10);
    expect(feed(b, lines)).toEqual([9]);
  });

  it('a copy 10 lines before the current one is out of the window', () => {
    const { breaker: b } = breaker();
    // Copies on lines 1, 6 and 11: the first is no longer among the last 10 lines at line 11.
    const lines = [error, ...[1, 2, 3, 4].map(other), error, ...[6, 7, 8, 9].map(other), error];
    expect(lines).toHaveLength(11);
    expect(feed(b, lines)).toEqual([]);
    // One more copy right away: lines 6, 11 and 12 lie within 10 lines.
    expect(b.onOutput(error)).toMatchObject({ trigger: 'repeated_error' });
  });

  // Seed 002 §6.1 says "3 consecutive identical hashes"; issue 15 refines it: the trigger counts
  // copies of one error, so another error between them does not hide the loop.
  it('another error between two copies does not start the count again', () => {
    const { breaker: b } = breaker();
    expect(feed(b, [error, error, 'TypeError: x is not a function', error])).toEqual([3]);
  });

  it('a two-line npm error printed again and again opens it; progress lines never count', () => {
    const { breaker: b } = breaker();
    const npm = ['npm ERR! code ELIFECYCLE', 'npm ERR! errno 1'];
    expect(
      feed(b, ['Bash npm run build', ...npm, 'Bash npm run build', ...npm, 'Bash npm run build', ...npm]),
    ).toEqual([7]);
    const { breaker: busy } = breaker();
    const progress = ['Edit src/errors.ts', 'Bash npm test', 'Tests: 0 failed, 12 passed, 12 total'];
    expect(feed(busy, [...progress, ...progress, ...progress, ...progress])).toEqual([]);
  });

  it('the hash ignores timestamps and line numbers', () => {
    const { breaker: b } = breaker();
    const lines = [
      "2026-11-22T10:00:01.123Z Error: Cannot find module 'foo' at /app/src/a.js:10:3",
      "[10:00:05] Error: Cannot find module 'foo' at /app/src/a.js:12:9",
      "2026-11-22 10:00:09 Error: Cannot find module 'foo' at /app/src/a.js:140:1",
    ];
    expect(feed(b, lines)).toEqual([2]);
    const tsc = breaker().breaker;
    expect(
      feed(tsc, [
        "src/a.ts(3,5): error TS2322: Type 'string' is not assignable to type 'number'.",
        "src/a.ts(4,7): error TS2322: Type 'string' is not assignable to type 'number'.",
        "src/a.ts(19,1): error TS2322: Type 'string' is not assignable to type 'number'.",
      ]),
    ).toEqual([2]);
    // A different message is a different error, whatever the numbers.
    const different = breaker().breaker;
    expect(
      feed(different, [
        "Error: Cannot find module 'foo'",
        "Error: Cannot find module 'bar'",
        "Error: Cannot find module 'foo'",
      ]),
    ).toEqual([]);
  });
});

describe('special cases: inactivity thresholds by place and by command', () => {
  const parse = (raw: Record<string, unknown>) => configSchema.parse(raw);
  const templates = [
    { id: 'lint', cmd: 'npm', args: ['run', 'lint'] },
    { id: 'test', cmd: 'npm', args: ['run', 'test'] },
  ];

  it('the test command defaults to the `test` verification template', () => {
    expect(parse({}).workflow.stack.test_command).toBeNull();
    expect(testCommandOf(parse({ verification: { templates } }))).toBe('npm run test');
    expect(
      testCommandOf(
        parse({ verification: { templates }, workflow: { stack: { test_command: 'make check' } } }),
      ),
    ).toBe('make check');
    // No template named test: one whose id names tests (never a lint command); up to a placeholder.
    expect(
      testCommandOf(
        parse({
          verification: {
            templates: [
              { id: 'lint', cmd: 'npm', args: ['run', 'lint'] },
              {
                id: 'unit-tests',
                cmd: 'npx',
                args: ['vitest', 'run', '{{file}}'],
                params: { file: { kind: 'path' } },
              },
            ],
          },
        }),
      ),
    ).toBe('npx vitest run');
    expect(testCommandOf(parse({ verification: { templates: [templates[0]] } }))).toBeNull();
    expect(testCommandOf(parse({}))).toBeNull();
  });

  it('with no test_command set, the test template running means 300 s of patience', () => {
    const clock = new FakeClock();
    const b = breakerFrom(parse({ verification: { templates } }), 'IMPLEMENTATION', () => clock.now());
    if (!b) throw new Error('breaker expected');
    b.onOutput('Bash npm test'); // the short form of `npm run test`
    clock.advance(299_000);
    expect(b.check()).toBeNull();
    clock.advance(1_000);
    expect(b.check()).toMatchObject({
      trigger: 'inactivity',
      detail: 'inactivity detected (300s without output; threshold 300s, test_inactivity_timeout)',
    });
    // Any other command: 60 s as usual.
    b.onOutput('Bash ls src');
    clock.advance(60_000);
    expect(b.check()).toMatchObject({
      detail: 'inactivity detected (60s without output; threshold 60s, inactivity_timeout)',
    });
  });

  it('the PR phase waits 120 s, the other phases 60 s', () => {
    const clock = new FakeClock();
    const config = parse({});
    const pr = breakerFrom(config, 'PR', () => clock.now());
    const qa = breakerFrom(config, 'QA', () => clock.now());
    if (!pr || !qa) throw new Error('breakers expected');
    clock.advance(60_000);
    expect(qa.check()).toMatchObject({
      detail: 'inactivity detected (60s without output; threshold 60s, inactivity_timeout)',
    });
    expect(pr.check()).toBeNull();
    clock.advance(59_000);
    expect(pr.check()).toBeNull();
    clock.advance(1_000);
    expect(pr.check()).toMatchObject({
      detail: 'inactivity detected (120s without output; threshold 120s, inactivity_timeout)',
    });
  });
});

// Issue 15: a reason says what the breaker saw and its threshold, in the config's unit (seconds),
// so a 45 s stagnation threshold is never "no task completed in 0 min".
describe('breaker reasons in the config unit', () => {
  it('stagnation configured in seconds is reported in seconds', () => {
    const clock = new FakeClock();
    const config = configSchema.parse({
      circuit_breaker: { task_stagnation_timeout: 45, inactivity_timeout: 600 },
    });
    const b = breakerFrom(config, 'IMPLEMENTATION', () => clock.now());
    if (!b) throw new Error('breaker expected');
    clock.advance(45_000);
    expect(b.check()).toMatchObject({
      trigger: 'stagnation',
      detail: 'task stagnation (no task completed in 45s; threshold 45s, task_stagnation_timeout)',
    });
  });

  it('the output cap names the bytes seen and the threshold', () => {
    const { breaker: b } = breaker({ maxOutputBytes: 1000 });
    expect(b.onBytes(1500)?.detail).toBe(
      'output size 1500 bytes in this run; threshold 1000 bytes, max_output_size',
    );
  });
});
