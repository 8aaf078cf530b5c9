import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { AgentRequest, AgentRunner } from '../../source/engine/agents/agent-run.js';
import { parseAnswers } from '../../source/engine/cycle/brainstorm/answers.js';
import { detectProject } from '../../source/engine/cycle/mapper/detect.js';
import {
  docsForPaths,
  docsForTask,
  LIVING_DOCS,
  LIVING_DOCS_TOKEN_CAP,
  type LoadingRow,
  type MapperAnswer,
  parseLoadingMap,
  renderLivingDocs,
  renderLoadingMap,
  totalTokens,
  trimToCap,
} from '../../source/engine/cycle/mapper/living-docs.js';
import { runMapper } from '../../source/engine/cycle/mapper/run-mapper.js';
import { EngineBus, type StampedEvent } from '../../source/engine/events.js';
import { Git } from '../../source/engine/judge/git.js';
import { endedProcess } from '../support/agent-fakes.js';

// Seed 003 P12's pure parts (detection, loading map, token cap) and the mapper with a scripted agent.

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function repo(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'relais-mapper-'));
  dirs.push(root);
  const git = (...args: string[]) => spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  git('init', '-q', '-b', 'main');
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  git('add', '-A');
  git('-c', 'user.name=t', '-c', 'user.email=t@t', 'commit', '-q', '--allow-empty', '-m', 'initial');
  return root;
}

function answer(lines = 1): MapperAnswer {
  return {
    docs: Object.fromEntries(
      LIVING_DOCS.map((d) => [d, `# ${d}\n${'- a fact\n'.repeat(lines)}`]),
    ) as MapperAnswer['docs'],
    loading_map: [
      { area: 'cli', paths: ['source/cli/'], docs: ['PATTERNS.md'] },
      { area: 'root', paths: ['package.json'], docs: ['TECH_STACK.md', 'WORKFLOW.md'] },
      { area: 'all', paths: ['*'], docs: ['PITFALLS.md'] },
    ],
  };
}

const CODE = { 'src/a.js': '1', 'src/b.js': '2', 'test/a.test.js': '3' };

describe('detectProject (seed 003 P12 heuristics)', () => {
  it('greenfield with boilerplate only; brownfield from 3 project files; returning on either marker', async () => {
    const boiler = [
      'README.md',
      'LICENSE',
      '.gitignore',
      'relais.config.json',
      'specs/VISION.md',
      'relais/x.json',
    ];
    const root = repo({});
    expect((await detectProject(root, 'specs', boiler)).kind).toBe('greenfield');
    expect((await detectProject(root, 'specs', [...boiler, 'src/a.js', 'src/b.js'])).kind).toBe('greenfield');
    const brown = await detectProject(root, 'specs', [...boiler, ...Object.keys(CODE)]);
    expect(brown).toMatchObject({
      kind: 'brownfield',
      why: '3 tracked project files (1 tests)',
      projectFiles: 3,
    });
    mkdirSync(join(root, 'specs'), { recursive: true });
    writeFileSync(join(root, 'specs/P2_DONE'), '');
    expect(await detectProject(root, 'specs', boiler)).toMatchObject({
      kind: 'returning',
      why: 'specs/P2_DONE found',
    });
  });
});

describe('the loading map in WORKFLOW.md', () => {
  it('round-trips, and names the docs for the areas a task touches', () => {
    const { rows, rejected } = parseLoadingMap(renderLoadingMap(answer().loading_map));
    expect(rejected).toEqual([]);
    expect(rows).toEqual(answer().loading_map);
    expect(docsForPaths(rows, ['source/cli/main.ts'])).toEqual([
      { doc: 'PATTERNS.md', areas: ['cli'] },
      { doc: 'PITFALLS.md', areas: ['all'] },
    ]);
    // A folder prefix is a folder: source/clinic/ is not under source/cli/; a file prefix matches itself.
    expect(docsForPaths(rows, ['source/clinic/x.ts']).map((d) => d.doc)).toEqual(['PITFALLS.md']);
    expect(docsForPaths(rows, ['package.json']).map((d) => d.doc)).toEqual([
      'TECH_STACK.md',
      'WORKFLOW.md',
      'PITFALLS.md',
    ]);
  });

  it('keys on the track type as seed 003 P12 draws it, with the path rows as a finer map', () => {
    const rows: LoadingRow[] = [
      { track: 'feature', docs: ['PRODUCT.md', 'PATTERNS.md'] },
      { track: 'bugfix', docs: ['PITFALLS.md', 'RISKS.md'] },
      { track: '*', docs: ['TECH_STACK.md'] },
      { area: 'cli', paths: ['source/cli/'], docs: ['PATTERNS.md'] },
    ];
    const text = renderLoadingMap(rows);
    expect(text).toContain('- track=bugfix | docs=PITFALLS.md, RISKS.md');
    expect(parseLoadingMap(text)).toEqual({ rows, rejected: [] });
    expect(docsForTask(rows, { trackType: 'bugfix', paths: ['src/a.ts'] })).toEqual([
      { doc: 'PITFALLS.md', areas: ['track type bugfix'] },
      { doc: 'RISKS.md', areas: ['track type bugfix'] },
      { doc: 'TECH_STACK.md', areas: ['every track'] },
    ]);
    expect(docsForTask(rows, { trackType: 'feature', paths: ['source/cli/main.ts'] })).toEqual([
      { doc: 'PRODUCT.md', areas: ['track type feature'] },
      { doc: 'PATTERNS.md', areas: ['track type feature', 'cli'] },
      { doc: 'TECH_STACK.md', areas: ['every track'] },
    ]);
    // A track whose type was not given gets the rows for every track only.
    expect(docsForTask(rows, { trackType: null, paths: [] }).map((d) => d.doc)).toEqual(['TECH_STACK.md']);
    expect(
      parseLoadingMap(
        `<!-- relais:loading-map -->\n- track=chore | docs=RISKS.md\n<!-- /relais:loading-map -->`,
      ),
    ).toEqual({
      rows: [],
      rejected: ['- track=chore | docs=RISKS.md'],
    });
  });

  it('leaves out (and names) rows a human broke, never guesses', () => {
    const text = renderLoadingMap(answer().loading_map).replace(
      '- area=cli | paths=source/cli/ | docs=PATTERNS.md',
      '- area=cli | paths=../outside/ | docs=PATTERNS.md\n- area=x | paths=src/ | docs=SECRETS.md\nnonsense',
    );
    const { rows, rejected } = parseLoadingMap(text);
    expect(rows.map((r) => ('area' in r ? r.area : r.track))).toEqual(['root', 'all']);
    expect(rejected).toHaveLength(3);
    expect(parseLoadingMap('# no map here')).toEqual({ rows: [], rejected: [] });
  });
});

describe('the 5,000-token cap', () => {
  it('trimToCap brings any answer under the cap and keeps the loading map whole', () => {
    const big = renderLivingDocs(answer(3000));
    expect(totalTokens(big)).toBeGreaterThan(LIVING_DOCS_TOKEN_CAP);
    const trimmed = trimToCap(big);
    expect(totalTokens(trimmed)).toBeLessThanOrEqual(LIVING_DOCS_TOKEN_CAP);
    expect(parseLoadingMap(trimmed['WORKFLOW.md']).rows).toHaveLength(3);
    for (const d of LIVING_DOCS) expect(trimmed[d]).toMatch(/^# /);
    const small = renderLivingDocs(answer(2));
    expect(trimToCap(small)).toEqual(small);
  });

  it('a single huge line is cut too', () => {
    const one = answer();
    one.docs['GLOSSARY.md'] = `# G\n${'x'.repeat(11_000)}`;
    one.docs['RISKS.md'] = `# R ${'y'.repeat(11_000)}`;
    expect(totalTokens(trimToCap(renderLivingDocs(one)))).toBeLessThanOrEqual(LIVING_DOCS_TOKEN_CAP);
  });
});

function runner(answers: Array<string | { failure: string }>, seen: AgentRequest[]): AgentRunner {
  return {
    run: async (request) => {
      seen.push(request);
      const next = answers.shift() ?? { failure: 'script exhausted' };
      const failure = typeof next === 'string' ? null : next.failure;
      return {
        text: typeof next === 'string' ? next : null,
        failure,
        costUsd: 0,
        costReported: true,
        errorText: failure,
        apiErrorStatus: null,
        permissionDenials: [],
        numTurns: 1,
        process: endedProcess(failure ? 1 : 0),
      };
    },
  };
}

function map(
  root: string,
  answers: Array<string | { failure: string }>,
  seen: AgentRequest[] = [],
  remap = false,
) {
  const bus = new EngineBus();
  const events: StampedEvent[] = [];
  bus.subscribe((e) => events.push(e));
  const done = runMapper({
    root,
    docsDir: 'specs',
    workspaceDir: 'relais',
    git: new Git(root),
    runner: runner(answers, seen),
    bus,
    signal: new AbortController().signal,
    model: 'sonnet',
    fallbackModel: null,
    timeoutMs: 60_000,
    remap,
    now: () => new Date('2026-01-01T00:00:00Z'),
  });
  return { done, events };
}

describe('runMapper with a scripted mapper agent', () => {
  it('asks again with the reason when the answer does not validate, and takes a valid second answer', async () => {
    const root = repo(CODE);
    const seen: AgentRequest[] = [];
    const result = await map(root, ['Here are the docs!', JSON.stringify(answer())], seen).done;
    expect(result).toMatchObject({ kind: 'brownfield', degraded: null, agentCalls: 2, trimmed: false });
    expect(seen[0]).toMatchObject({
      role: 'mapper',
      permissionMode: 'plan',
      tools: ['Read', 'Glob', 'Grep'],
    });
    expect(seen[1]?.userPrompt).toContain(
      'Your previous answer was rejected: the answer is not a JSON object',
    );
    expect(readFileSync(join(root, 'specs/p12/GLOSSARY.md'), 'utf8')).toBe('# GLOSSARY.md\n- a fact\n');
  });

  it('over the cap: asked again with the overage; a shorter second answer is taken as it is', async () => {
    const root = repo(CODE);
    const seen: AgentRequest[] = [];
    const result = await map(root, [JSON.stringify(answer(1000)), JSON.stringify(answer(3))], seen).done;
    expect(result).toMatchObject({ kind: 'brownfield', agentCalls: 2, trimmed: false });
    expect(seen[1]?.userPrompt).toMatch(/total about \d+ tokens .* the cap is 4999/);
    expect(readFileSync(join(root, 'specs/p12/PATTERNS.md'), 'utf8')).toBe(
      `# PATTERNS.md\n${'- a fact\n'.repeat(3)}`,
    );
    expect(result.tokens).toBeLessThanOrEqual(LIVING_DOCS_TOKEN_CAP);
  });

  it('a returning project without code is not mapped, even with --remap; one with code keeps its docs', async () => {
    const seen: AgentRequest[] = [];
    const bare = await map(repo({ 'README.md': '# x', 'specs/P2_DONE': '' }), [], seen, true).done;
    expect(bare).toMatchObject({ kind: 'greenfield', degraded: null, agentCalls: 0 });
    expect(bare.detection.kind).toBe('returning');
    const root = repo(CODE);
    await map(root, [JSON.stringify(answer())], seen).done;
    const again = await map(root, [], seen).done;
    expect(again).toMatchObject({ kind: 'returning', agentCalls: 0 });
    expect(Object.keys(again.docs)).toHaveLength(7);
    expect(seen).toHaveLength(1);
  });

  it('an invalid answer twice, an agent failure, or a docs folder that is a link: greenfield with the reason', async () => {
    const twice = await map(repo(CODE), ['{}', '{"docs": 1}']).done;
    expect(twice).toMatchObject({ kind: 'greenfield', docs: {}, agentCalls: 2 });
    expect(twice.degraded).toMatch(/^mapper answer invalid twice: schema violations/);

    const failed = map(repo(CODE), [{ failure: 'claude: command not found' }]);
    expect((await failed.done).degraded).toBe('mapper agent: claude: command not found');
    expect(
      failed.events.some(
        (e) => e.type === 'log' && e.level === 'warn' && /continuing as greenfield/.test(e.message),
      ),
    ).toBe(true);

    // Never written through a link: specs/ pointing outside the repository is refused, not followed.
    const root = repo(CODE);
    const outside = mkdtempSync(join(tmpdir(), 'relais-outside-'));
    dirs.push(outside);
    symlinkSync(outside, join(root, 'specs'));
    const linked = await map(root, [JSON.stringify(answer())]).done;
    expect(linked.kind).toBe('greenfield');
    expect(linked.degraded).toContain('specs is a symbolic link');
    expect(spawnSync('ls', ['-A', outside], { encoding: 'utf8' }).stdout).toBe('');
  });
});

describe('brainstorm answers', () => {
  const base = {
    vision: 'v',
    users: 'u',
    success: ['s'],
    stack: 'node',
    requirements: [{ id: 'R1', text: 'one' }],
    phases: [{ id: 'P1', name: 'p', goal: 'g', requirements: ['R1'], success: ['ok'] }],
  };
  it('accepts a complete set and refuses duplicates, unknown and unplanned requirements, with the reason', () => {
    expect(parseAnswers(JSON.stringify(base))).toMatchObject({
      ok: true,
      answers: { non_goals: [], constraints: [] },
    });
    const dup = parseAnswers(
      JSON.stringify({ ...base, requirements: [...base.requirements, { id: 'R1', text: 'x' }] }),
    );
    expect(dup.ok ? '' : dup.reason).toContain('R1 is listed twice');
    const unplanned = parseAnswers(
      JSON.stringify({ ...base, requirements: [...base.requirements, { id: 'R2', text: 'x' }] }),
    );
    expect(unplanned.ok ? '' : unplanned.reason).toContain('no phase delivers R2');
    const empty = parseAnswers(JSON.stringify({ ...base, vision: '   ' }));
    expect(empty.ok).toBe(false);
    expect(parseAnswers('{').ok).toBe(false);
  });
});
