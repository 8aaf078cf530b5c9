import * as z from 'zod';
import { blockedFileSchema } from './blocked.js';
import { builderResultSchema } from './builder-result.js';
import { configSchema } from './config.js';
import { historyMetaSchema } from './history-meta.js';
import { inflightSchema } from './inflight.js';
import { lockFileSchema } from './lock.js';
import { reportSchema } from './report.js';
import { workspaceStateSchema } from './state.js';
import { taskSchema } from './task.js';
import { userSettingsSchema } from './user-settings.js';
import { workflowFileSchema } from './workflow.js';

/**
 * The JSON Schema files (schemas/*.schema.json) are generated from the zod schemas, never written
 * by hand: a test fails when the committed files drift, and another checks that both accept and
 * reject the same documents.
 */

interface SchemaSource {
  readonly title: string;
  readonly schema: z.ZodType;
  /** `input` for files humans write (defaults make fields optional), `output` for runner-written ones. */
  readonly io: 'input' | 'output';
  readonly note?: string;
  /** False for a file outside any project (the user settings): `relais init` does not copy it. */
  readonly inProject?: false;
}

export const JSON_SCHEMA_SOURCES = {
  'config.schema.json': {
    title: 'Relais config (relais.config.json)',
    schema: configSchema,
    io: 'input',
    note: 'relais also checks what JSON Schema cannot say: verification template ids are unique, every {{placeholder}} in args is declared in params, reject_metachars_regex compiles, builder.cursor is set when default_mode is "cursor", its output_file lies in the workspace, and its command is not a shell given -c.',
  },
  'task.schema.json': { title: 'Relais Task', schema: taskSchema, io: 'output' },
  'builder_result.schema.json': { title: 'Relais Builder Result', schema: builderResultSchema, io: 'output' },
  'report.schema.json': { title: 'Relais Report', schema: reportSchema, io: 'output' },
  'state.schema.json': {
    title: 'Relais workspace state (STATE.json)',
    schema: workspaceStateSchema,
    io: 'output',
  },
  'lock.schema.json': { title: 'Relais lock (lock.json)', schema: lockFileSchema, io: 'output' },
  'blocked.schema.json': { title: 'Relais BLOCKED.json', schema: blockedFileSchema, io: 'output' },
  'history_meta.schema.json': { title: 'Relais history meta.json', schema: historyMetaSchema, io: 'output' },
  'workflow.schema.json': {
    title: 'Ralphy workflow state (WORKFLOW.json)',
    schema: workflowFileSchema,
    io: 'output',
  },
  'inflight.schema.json': {
    title: 'Relais INFLIGHT.json (a tick in progress)',
    schema: inflightSchema,
    io: 'output',
  },
  'user_settings.schema.json': {
    title: 'Relais user settings (relais config path)',
    schema: userSettingsSchema,
    io: 'input',
    inProject: false,
  },
} as const satisfies Record<string, SchemaSource>;

export type SchemaFileName = keyof typeof JSON_SCHEMA_SOURCES;

export function generateJsonSchema(name: SchemaFileName): Record<string, unknown> {
  const source: SchemaSource = JSON_SCHEMA_SOURCES[name];
  const body = splitTypeArrays(
    z.toJSONSchema(source.schema, { target: 'draft-2020-12', io: source.io }),
  ) as Record<string, unknown>;
  const { $schema, ...rest } = body;
  return {
    $schema,
    $id: `https://relais.dev/schemas/${name}`,
    title: source.title,
    ...(source.note ? { description: source.note } : {}),
    ...rest,
  };
}

/** Strict validators reject `type: [a, b]`; an anyOf of single types means the same. */
function splitTypeArrays(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(splitTypeArrays);
  if (typeof node !== 'object' || node === null) return node;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) out[key] = splitTypeArrays(value);
  if (Array.isArray(out.type)) {
    out.anyOf = (out.type as string[]).map((type) => ({ type }));
    delete out.type;
  }
  return out;
}

/** File text exactly as committed: stable key order from zod, two-space indent, final newline. */
export function renderJsonSchemaFile(name: SchemaFileName): string {
  return `${JSON.stringify(generateJsonSchema(name), null, 2)}\n`;
}

export const SCHEMA_FILE_NAMES = Object.keys(JSON_SCHEMA_SOURCES) as SchemaFileName[];

/** The schemas `relais init` copies into a project's workspace (relais/schemas/). */
export const PROJECT_SCHEMA_FILE_NAMES = SCHEMA_FILE_NAMES.filter(
  (name) => (JSON_SCHEMA_SOURCES[name] as SchemaSource).inProject !== false,
);
