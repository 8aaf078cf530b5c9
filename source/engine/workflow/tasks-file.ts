/**
 * specs/TASKS.md (seed 002 §7): one `## Task N: Title` section per task, with `- **Status**:`,
 * `- **Description**:` and `- **Files**:` lines, and for parallel lanes (issue 19) the optional
 * `- **Depends on**:` (task numbers, or `none`) and `- **Scope**:` (the globs the task may touch),
 * and for best of N the optional `- **Risk**:` (`high` makes several builders try the task,
 * `workflow.best_of`; `low`, `medium` or `none` change nothing). The French headings of the seed (`## Tâche`,
 * `Statut`, `Fichiers`) are read too. The runner parses it strictly: an empty or malformed file is
 * refused with the line that is wrong, and statuses are rewritten in place, nothing else.
 */

export type TaskStatus = 'pending' | 'in_progress' | 'completed';

export interface PlanTask {
  readonly number: number;
  readonly title: string;
  readonly status: TaskStatus;
  readonly description: string;
  readonly files: string[];
  /** Task numbers that must be completed first; none when the line is absent. */
  readonly dependsOn: number[];
  /** The globs the task declares it touches; null when undeclared (such a task runs alone). */
  readonly scope: string[] | null;
  /** `- **Risk**: high`: best of N applies (`workflow.best_of` builders try it). */
  readonly risky: boolean;
  /** 0-based line of the status line, so the status can be rewritten in place. */
  readonly statusLine: number;
}

export type TasksParse = { ok: true; tasks: PlanTask[] } | { ok: false; problems: string[] };

/** WORKFLOW.json keeps one record per task: a list longer than this is a spec to split. */
const MAX_TASKS = 500;
const MAX_TASK_NUMBER = 100_000;

const HEADING = /^##\s+(?:Task|Tâche|Tache)\s+(\d+)\s*:\s*(.+?)\s*$/i;
const FIELD =
  /^\s*-\s+\*\*(Status|Statut|Description|Files|Fichiers|Depends on|Scope|Risk)\*\*\s*:\s*(.*?)\s*$/i;

export function parseTasks(text: string): TasksParse {
  const lines = text.split('\n');
  const problems: string[] = [];
  const tasks: PlanTask[] = [];
  let current: {
    number: number;
    title: string;
    line: number;
    fields: Map<string, { value: string; line: number }>;
  } | null = null;
  const close = () => {
    if (!current) return;
    const task = toTask(current, problems);
    if (task) tasks.push(task);
  };
  lines.forEach((raw, i) => {
    const line = raw.replace(/\r$/, '');
    const heading = HEADING.exec(line);
    if (heading) {
      close();
      current = { number: Number(heading[1]), title: heading[2] as string, line: i, fields: new Map() };
      return;
    }
    const field = FIELD.exec(line);
    if (field && current)
      current.fields.set(normalizeField(field[1] as string), { value: field[2] as string, line: i });
  });
  close();
  if (tasks.length === 0 && problems.length === 0)
    problems.push(
      'no task found: expected sections like "## Task 1: Title" with a "- **Status**: pending" line',
    );
  const numbers = tasks.map((t) => t.number);
  if (new Set(numbers).size !== numbers.length) problems.push(`task numbers repeat: ${numbers.join(', ')}`);
  const huge = tasks.find((t) => t.number > MAX_TASK_NUMBER);
  if (huge) problems.push(`task number ${huge.number} is above ${MAX_TASK_NUMBER}`);
  problems.push(...dependencyProblems(tasks));
  if (tasks.length > MAX_TASKS) problems.push(`${tasks.length} tasks: at most ${MAX_TASKS} (split the work)`);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, tasks };
}

/** A dependency must name another task of the file, and the dependencies must not loop. */
function dependencyProblems(tasks: readonly PlanTask[]): string[] {
  const known = new Set(tasks.map((t) => t.number));
  const problems: string[] = [];
  for (const task of tasks)
    for (const dep of task.dependsOn) {
      if (dep === task.number) problems.push(`task ${task.number} depends on itself`);
      else if (!known.has(dep))
        problems.push(`task ${task.number} depends on task ${dep}, which does not exist`);
    }
  if (problems.length > 0) return problems;
  const state = new Map<number, 'visiting' | 'done'>();
  const byNumber = new Map(tasks.map((t) => [t.number, t]));
  const visit = (n: number, path: number[]): number[] | null => {
    if (state.get(n) === 'done') return null;
    if (state.get(n) === 'visiting') return [...path.slice(path.indexOf(n)), n];
    state.set(n, 'visiting');
    for (const dep of byNumber.get(n)?.dependsOn ?? []) {
      const loop = visit(dep, [...path, n]);
      if (loop) return loop;
    }
    state.set(n, 'done');
    return null;
  };
  for (const task of tasks) {
    const loop = visit(task.number, []);
    if (loop) return [`dependencies loop: task ${loop.join(' → task ')}`];
  }
  return [];
}

function normalizeField(name: string): string {
  const lower = name.toLowerCase();
  if (lower === 'statut') return 'status';
  if (lower === 'fichiers') return 'files';
  if (lower === 'depends on') return 'depends';
  return lower;
}

function toTask(
  section: {
    number: number;
    title: string;
    line: number;
    fields: Map<string, { value: string; line: number }>;
  },
  problems: string[],
): PlanTask | null {
  const where = `line ${section.line + 1} (task ${section.number})`;
  const status = section.fields.get('status');
  if (!status) {
    problems.push(`${where}: no "- **Status**:" line`);
    return null;
  }
  const value = status.value.toLowerCase().replace(/[`*]/g, '').trim();
  if (value !== 'pending' && value !== 'in_progress' && value !== 'completed') {
    problems.push(
      `line ${status.line + 1}: status "${status.value}" is not pending, in_progress or completed`,
    );
    return null;
  }
  const files = listOf(section.fields.get('files')?.value ?? '');
  const depends = section.fields.get('depends');
  const dependsOn = depends ? dependenciesOf(depends.value, depends.line, problems) : [];
  if (dependsOn === null) return null;
  const declared = section.fields.get('scope');
  const scope = declared ? listOf(declared.value) : null;
  if (scope !== null && scope.length === 0) {
    problems.push(
      `line ${(declared?.line ?? 0) + 1}: "Scope" names no glob (leave the line out to run the task alone)`,
    );
    return null;
  }
  const risky = riskOf(section.fields.get('risk'), problems);
  if (risky === null) return null;
  return {
    number: section.number,
    title: section.title,
    status: value,
    description: section.fields.get('description')?.value ?? '',
    files,
    dependsOn,
    scope,
    risky,
    statusLine: status.line,
  };
}

/** `high` is risky; `low`, `medium`, `none` or no line are not; anything else is a problem. */
function riskOf(field: { value: string; line: number } | undefined, problems: string[]): boolean | null {
  if (!field) return false;
  const value = field.value.toLowerCase().replace(/[`*]/g, '').trim();
  if (value === 'high') return true;
  if (['low', 'medium', 'none', ''].includes(value)) return false;
  problems.push(`line ${field.line + 1}: "Risk" is "${field.value}", not high, medium, low or none`);
  return null;
}

function listOf(value: string): string[] {
  return value
    .split(/[,\s]+/)
    .map((f) => f.replace(/[`[\]]/g, '').trim())
    .filter((f) => f.length > 0);
}

/** `1, 2`, `Task 1, #2` or `none`: task numbers; anything else is a problem with its line. */
function dependenciesOf(value: string, line: number, problems: string[]): number[] | null {
  const cleaned = value.replace(/[`*]/g, '').trim();
  if (/^(none|-|—|)$/i.test(cleaned)) return [];
  const numbers: number[] = [];
  for (const part of cleaned.split(/[,\s]+/).filter(Boolean)) {
    if (/^(task|tasks|and)$/i.test(part)) continue;
    const n = /^#?(\d{1,6})$/.exec(part);
    if (!n) {
      problems.push(`line ${line + 1}: "Depends on" names "${part}", not a task number (or "none")`);
      return null;
    }
    numbers.push(Number(n[1]));
  }
  return [...new Set(numbers)];
}

/** Rewrites one task's status line, keeping the rest of the file byte for byte. */
export function withStatus(text: string, task: PlanTask, status: TaskStatus): string {
  const lines = text.split('\n');
  const line = lines[task.statusLine] ?? '';
  // A CRLF file keeps its \r: only the value between ": " and the line end changes.
  lines[task.statusLine] = line.replace(/(\*\*\s*:\s*)[^\r]*/, `$1${status}`);
  return lines.join('\n');
}

export function countCompleted(tasks: readonly PlanTask[]): number {
  return tasks.filter((t) => t.status === 'completed').length;
}
