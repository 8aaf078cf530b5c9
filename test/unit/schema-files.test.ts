import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { builderResultSchema } from '../../source/engine/protocol/builder-result.js';
import { configSchema } from '../../source/engine/protocol/config.js';
import {
  generateJsonSchema,
  JSON_SCHEMA_SOURCES,
  renderJsonSchemaFile,
  SCHEMA_FILE_NAMES,
  type SchemaFileName,
} from '../../source/engine/protocol/json-schemas.js';
import { reportSchema } from '../../source/engine/protocol/report.js';
import { freshState, workspaceStateSchema } from '../../source/engine/protocol/state.js';
import { taskSchema } from '../../source/engine/protocol/task.js';
import { userSettingsSchema } from '../../source/engine/protocol/user-settings.js';
import { buildReport, newTickRecord } from '../../source/engine/tick/tick-record.js';
import { renderPackageDefaultConfig } from '../../source/engine/workspace/default-config.js';
import { REPO_ROOT, task } from '../support/project.js';

// The JSON Schema files are generated from zod: they must not drift, must compile under a strict
// validator, and must accept and reject the same documents as the zod schemas.

function strictAjv() {
  const ajv = new Ajv2020.default({ strict: true, allErrors: true });
  addFormats.default(ajv);
  return ajv;
}

describe('committed schema files', () => {
  it.each(SCHEMA_FILE_NAMES)(
    'schemas/%s matches what the zod schema generates (run `npm run schemas`)',
    (name) => {
      expect(readFileSync(join(REPO_ROOT, 'schemas', name), 'utf8')).toBe(renderJsonSchemaFile(name));
    },
  );

  it('the default relais.config.json matches the generator and validates', () => {
    const text = readFileSync(join(REPO_ROOT, 'relais.config.json'), 'utf8');
    expect(text).toBe(renderPackageDefaultConfig());
    expect(configSchema.safeParse(JSON.parse(text)).success).toBe(true);
  });

  it.each(SCHEMA_FILE_NAMES)('%s compiles under Ajv strict mode', (name) => {
    expect(() => strictAjv().compile(generateJsonSchema(name))).not.toThrow();
  });
});

function agreement(
  name: SchemaFileName,
  schema: z.ZodType,
  docs: unknown[],
): Array<{ doc: unknown; zod: boolean; json: boolean }> {
  const validate = strictAjv().compile(generateJsonSchema(name));
  return docs.map((doc) => ({ doc, zod: schema.safeParse(doc).success, json: validate(doc) as boolean }));
}

const scope = {
  allowed_globs: ['src/**'],
  forbidden_globs: [],
  allow_new_files: false,
  allow_lockfile_changes: false,
};
const without = (obj: Record<string, unknown>, key: string) =>
  Object.fromEntries(Object.entries(obj).filter(([k]) => k !== key));

describe('zod and JSON Schema agree', () => {
  it('task.schema.json', () => {
    const docs = [
      task(),
      task({ task_kind: 'verify_only' }),
      task({ task_kind: 'question', question: { prompt: 'Which?', choices: ['a', 'b'] } }),
      task({
        verification: {
          fast: ['t'],
          slow: ['u'],
          params: { t: { pkg: 'web', n: 3, flag: true, none: null } },
        },
      }),
      task({ task_kind: 'question' }),
      task({ task_kind: 'refactor' }),
      task({ extra: true }),
      without(task(), 'scope'),
      task({ scope: { ...scope, allowed_globs: [] } }),
      task({ scope: { ...scope, extra: 1 } }),
      task({ task_id: 'has space' }),
      task({ task_id: '' }),
      task({ diff_limits: { max_files_touched: 0, max_lines_changed: 10 } }),
      task({ diff_limits: { max_files_touched: 1.5, max_lines_changed: 10 } }),
      task({ verification: { fast: ['a', 'a'], slow: [] } }),
      task({ verification: { fast: [], slow: [], params: { t: { deep: { no: 1 } } } } }),
      task({ builder: { mode: 'patch', max_turns: 4, instructions: 'x' } }),
      task({ builder: { mode: 'claude_code', max_turns: 41, instructions: 'x' } }),
      task({ intent: 'x'.repeat(1201) }),
      'not an object',
      null,
      [],
      // Seed 001 PR6: control XOR builder.
      { ...without(task(), 'builder'), control: { action: 'stop', reason: 'done' } },
      { ...task(), control: { action: 'stop' } },
      without(task(), 'builder'),
      { ...without(task(), 'builder'), control: { action: 'pause' } },
      // Seed 001 PR4-PR5: builder modes.
      task({ builder: { mode: 'patch', max_turns: 1, instructions: 'x', patch: '--- a/x\n+++ b/x\n' } }),
      task({ builder: { mode: 'cursor', max_turns: 1, instructions: 'x' } }),
      task({
        task_kind: 'question',
        question: { prompt: 'q' },
        builder: { mode: 'cursor', max_turns: 1, instructions: 'x' },
      }),
    ];
    const results = agreement('task.schema.json', taskSchema, docs);
    expect(results.filter((r) => r.zod !== r.json)).toEqual([]);
    expect(results.filter((r) => r.zod).length).toBe(7);
  });

  it('builder_result.schema.json', () => {
    const ok = { summary: 's', files_intended: ['a'], commands_ran: [], notes: [] };
    const docs = [
      ok,
      { ...ok, summary: '' },
      { ...ok, extra: 1 },
      without(ok, 'notes'),
      { ...ok, notes: ['x'.repeat(301)] },
      { ...ok, files_intended: 'a' },
    ];
    const results = agreement('builder_result.schema.json', builderResultSchema, docs);
    expect(results.filter((r) => r.zod !== r.json)).toEqual([]);
    expect(results.filter((r) => r.zod).length).toBe(1);
  });

  it('report.schema.json', () => {
    const record = newTickRecord('20261122T000000Z-abcdef', new Date('2026-11-22T00:00:00Z'));
    const report = buildReport(
      record,
      new Date('2026-11-22T00:00:01Z'),
      freshState(new Date('2026-11-22T00:00:00Z')),
      'relais/REPORT.md',
    );
    const docs = [
      report,
      { ...report, code: 'STOP_MADE_UP' },
      { ...report, verdict: 'maybe' },
      { ...report, duration_ms: -1 },
      { ...report, started_at: 'yesterday' },
      { ...report, base_commit: 'abc' },
      without(report, 'remediation'),
      { ...report, verification: { ...report.verification, exec_mode: 'shell' } },
    ];
    const results = agreement('report.schema.json', reportSchema, docs);
    expect(results.filter((r) => r.zod !== r.json)).toEqual([]);
    expect(results.filter((r) => r.zod).length).toBe(1);
  });

  it('state.schema.json', () => {
    const state = freshState(new Date('2026-11-22T00:00:00Z'));
    const docs = [
      state,
      { ...state, schema_version: 2 },
      { ...state, budgets: { ...state.budgets, ticks: -1 } },
      without(state, 'budgets'),
      { ...state, milestone_id: '' },
    ];
    const results = agreement('state.schema.json', workspaceStateSchema, docs);
    expect(results.filter((r) => r.zod !== r.json)).toEqual([]);
    expect(results.filter((r) => r.zod).length).toBe(1);
  });

  it('config.schema.json, for everything JSON Schema can express', () => {
    const docs = [
      {},
      JSON.parse(renderPackageDefaultConfig()),
      { runner: { max_tick_seconds: 60 } },
      { runner: { max_tick_seconds: 0 } },
      { runner: { unknown: 1 } },
      { workspace_dir: '..' },
      { workspace_dir: '.git' },
      { workspace_dir: 'a/b' },
      { project: { goal_file: '../outside.md' } },
      { project: { goal_file: '/etc/passwd' } },
      { claude_code_cli: { command: 'claude --bad' } },
      { verification: { templates: [{ id: 't', cmd: 'npm test' }] } },
      { verification: { templates: [{ id: 't', cmd: 'npm', args: ['test'] }] } },
      { budgets: { warn_at_fraction: 0 } },
      { agents: { builder: { model: 'sonnet', provider: 'gpt' } } },
    ];
    const results = agreement('config.schema.json', configSchema, docs);
    expect(results.filter((r) => r.zod !== r.json)).toEqual([]);
    expect(results.filter((r) => r.zod).length).toBe(4);
  });

  it('user_settings.schema.json (the file `relais config` writes)', () => {
    const docs = [
      {},
      { $schema: 'file:///usr/lib/node_modules/relais/schemas/user_settings.schema.json', theme: 'none' },
      {
        agents: { builder: { provider: 'codex', model: 'gpt-5.2-codex' } },
        notifications: { enabled: true },
      },
      { theme: 'dark' },
      { theme: 'purple' },
      { notifications: { enabled: 'yes' } },
      { agents: { builder: { provider: 'gemini' } } },
      { agents: { reviewer: { model: 'x' } } },
      { colour: 'red' },
    ];
    const results = agreement('user_settings.schema.json', userSettingsSchema, docs);
    expect(results.filter((r) => r.zod !== r.json)).toEqual([]);
    expect(results.filter((r) => r.zod).length).toBe(3);
  });

  it('config: the rules JSON Schema cannot express are enforced by zod and named in the schema description', () => {
    const zodOnly = [
      {
        verification: {
          templates: [
            { id: 't', cmd: 'a' },
            { id: 't', cmd: 'b' },
          ],
        },
      },
      { verification: { templates: [{ id: 't', cmd: 'a', args: ['{{x}}'] }] } },
      { verification: { reject_metachars_regex: '[' } },
    ];
    const results = agreement('config.schema.json', configSchema, zodOnly);
    expect(results.map((r) => [r.zod, r.json])).toEqual([
      [false, true],
      [false, true],
      [false, true],
    ]);
    expect(JSON_SCHEMA_SOURCES['config.schema.json'].note).toMatch(/unique.*placeholder.*compiles/);
  });
});
