import { commitJudgedTree } from '../judge/commit.js';
import { rollback } from '../judge/rollback.js';
import type { EffectiveScope } from '../judge/scope-rules.js';
import { type BuildGuards, judgeChanges, takeBuildGuards } from '../tick/judge-phase.js';
import type { TickSetup } from '../tick/preflight.js';
import { CONFIG_FILE_NAME } from '../workspace/paths.js';
import type { StepOutcome } from './agent-step.js';

/**
 * A workflow agent (spec, single dev, QA) is judged like a tick's builder: the runner's guards
 * before it runs, the judge from git reality after it, then the judged tree committed, or
 * everything rolled back. "The agent wrote the spec" is only believed once git shows exactly that.
 */

export interface JudgedRun {
  readonly step: StepOutcome;
  /** Set when the step was done but its changes broke the phase's scope. */
  readonly violations: string[];
  readonly commit: string | null;
  readonly touched: string[];
  readonly blastLine: string;
}

export interface PhaseScope {
  readonly allowed: readonly string[];
  readonly allowNewFiles: boolean;
  readonly allowLockfileChanges: boolean;
  readonly maxFiles: number;
  readonly maxLines: number;
}

export async function judgedAgentRun(
  setup: TickSetup,
  env: NodeJS.ProcessEnv,
  phaseScope: PhaseScope,
  commitMessage: string,
  run: () => Promise<StepOutcome>,
): Promise<JudgedRun> {
  const guards = await takeBuildGuards(setup, env, async () => undefined);
  const step = await run();
  const judged = await judgeChanges(setup, guards, scopeOf(setup, phaseScope), 'execute');
  const touched = judged.touched.files.map((f) => f.path);
  try {
    if (step.kind !== 'done' || judged.verdict.code !== null) {
      await undo(setup, guards);
      return {
        step,
        violations: step.kind === 'done' ? judged.verdict.violations : [],
        commit: null,
        touched,
        blastLine: judged.blastLine,
      };
    }
    const committed = await commitJudgedTree(
      setup.git,
      setup.facts,
      judged.touched.index,
      commitMessage,
      async () => undefined,
    );
    return { step, violations: [], commit: committed.commit, touched, blastLine: judged.blastLine };
  } finally {
    await judged.touched.index.dispose();
  }
}

function scopeOf(setup: TickSetup, phase: PhaseScope): EffectiveScope {
  const { config, paths } = setup;
  return {
    taskAllowed: phase.allowed,
    configAllowed: phase.allowed,
    forbidden: [
      ...new Set([
        ...config.scope.default_forbidden_globs,
        '.git',
        '.git/**',
        paths.relDir,
        `${paths.relDir}/**`,
        CONFIG_FILE_NAME,
      ]),
    ],
    allowNewFiles: phase.allowNewFiles,
    allowLockfileChanges: phase.allowLockfileChanges,
    lockfiles: config.scope.lockfiles,
    limits: { max_files_touched: phase.maxFiles, max_lines_changed: phase.maxLines },
  };
}

async function undo(setup: TickSetup, guards: BuildGuards): Promise<void> {
  await rollback({
    git: setup.git,
    facts: setup.facts,
    paths: setup.paths,
    gitGuard: guards.gitGuard,
    ignoredBefore: guards.ignoredBefore,
    sideBefore: guards.sideBefore,
  });
}
