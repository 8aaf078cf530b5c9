/**
 * specs/TASKS.md (seed 002 §7): one `## Task N: Title` section per task, with `- **Status**:`,
 * `- **Description**:` and `- **Files**:` lines. The French headings of the seed (`## Tâche`,
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
  /** 0-based line of the status line, so the status can be rewritten in place. */
  readonly statusLine: number;
}

export type TasksParse = { ok: true; tasks: PlanTask[] } | { ok: false; problems: string[] };

/** WORKFLOW.json keeps one record per task: a list longer than this is a spec to split. */
const MAX_TASKS = 500;
const MAX_TASK_NUMBER = 100_000;

const HEADING = /^##\s+(?:Task|Tâche|Tache)\s+(\d+)\s*:\s*(.+?)\s*$/i;
const FIELD = /^\s*-\s+\*\*(Status|Statut|Description|Files|Fichiers)\*\*\s*:\s*(.*?)\s*$/i;

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
  if (tasks.length > MAX_TASKS) problems.push(`${tasks.length} tasks: at most ${MAX_TASKS} (split the work)`);
  return problems.length > 0 ? { ok: false, problems } : { ok: true, tasks };
}

function normalizeField(name: string): string {
  const lower = name.toLowerCase();
  if (lower === 'statut') return 'status';
  if (lower === 'fichiers') return 'files';
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
  const files = (section.fields.get('files')?.value ?? '')
    .split(/[,\s]+/)
    .map((f) => f.replace(/[`[\]]/g, '').trim())
    .filter((f) => f.length > 0);
  return {
    number: section.number,
    title: section.title,
    status: value,
    description: section.fields.get('description')?.value ?? '',
    files,
    statusLine: status.line,
  };
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
