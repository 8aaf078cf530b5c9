import * as z from 'zod';
import { codexCliSchema, cycleSectionSchema } from './cycle-policy.js';
import { lazySchema } from './lazy-schema.js';

/**
 * relais.config.json (seed 000 §2, with docs/ARCHITECTURE.md's per-role `agents`). Every object is strict so a
 * typo is reported by name instead of being ignored; every section has defaults so a minimal file
 * works. `prefault` runs the defaults through the schema, so nested defaults apply too.
 */

// Patterns rather than refinements, so the generated JSON Schema enforces the same rule.
const relativePath = lazySchema(() =>
  z
    .string()
    .min(1)
    .max(300)
    .regex(
      /^(?![\\/])(?!.*(?:^|[\\/])\.\.(?:[\\/]|$))[^\0]+$/,
      'must be a path relative to the repository root, without ".."',
    ),
);

const glob = lazySchema(() => z.string().min(1).max(200));

/**
 * A glob of the scope fence: relative to the repository root. `../**` or `/etc/**` would name
 * nothing a tick may touch (every edit refused) while reading as a wider fence.
 */
const FENCE_GLOB = /^(?![\\/~])(?![A-Za-z]:)(?!.*(?:^|[\\/])\.\.(?:[\\/]|$))[^\0]+$/;
const FENCE_GLOB_MESSAGE =
  'must be a glob relative to the repository root (no leading "/" or "~", no ".."): the fence cannot reach outside the repository';

const fenceGlob = lazySchema(() => glob.regex(FENCE_GLOB, FENCE_GLOB_MESSAGE));

/** Why a glob cannot be part of the fence, or null (`relais init` asks before writing it). */
export function fenceGlobProblem(pattern: string): string | null {
  const checked = fenceGlob.safeParse(pattern);
  return checked.success ? null : `"${pattern}" ${checked.error.issues[0]?.message ?? 'is not a valid glob'}`;
}

const argvWord = lazySchema(() => z.string().max(4000));

/**
 * Who plays a role (docs/ARCHITECTURE.md: `agents.<role> = { provider, model }`): Claude Code, Codex
 * (`codex_cli`) or the external driver (`builder.cursor`), for any role in any engine.
 */
export const AGENT_PROVIDERS = ['claude', 'codex', 'external'] as const;
export type AgentProvider = (typeof AGENT_PROVIDERS)[number];

const agentRole = lazySchema(() =>
  z.strictObject({
    provider: z.enum(AGENT_PROVIDERS).default('claude'),
    model: z.string().min(1).max(120),
    fallback_model: z.string().min(1).max(120).nullable().default(null),
  }),
);

const verificationParam = lazySchema(() =>
  z.strictObject({
    kind: z.enum(['string_token', 'path']),
    max_len: z.int().min(1).max(4096).optional(),
  }),
);

const verificationTemplate = lazySchema(() =>
  z.strictObject({
    id: z
      .string()
      .min(1)
      .max(64)
      .regex(/^[A-Za-z0-9_.-]+$/, 'template ids are letters, digits, "_", "." or "-"'),
    cmd: z
      .string()
      .min(1)
      .max(120)
      .regex(/^\S+$/, 'cmd is one program name or path, never a shell string (put arguments in args)'),
    args: z.array(argvWord).max(40).default([]),
    params: z.record(z.string().regex(/^[A-Za-z0-9_]+$/), verificationParam).default({}),
    timeout_seconds: z.int().min(1).max(86400).optional(),
  }),
);

const SHELLS = /(^|\/)(sh|bash|zsh|dash|ksh|fish|csh|tcsh|cmd(\.exe)?|powershell|pwsh)$/;

/** An external builder driver: argv only; a shell given a command string is refused too. */
const cursorDriver = lazySchema(() =>
  z
    .strictObject({
      command: z
        .string()
        .min(1)
        .max(500)
        .regex(/^[^\s;&|`$<>]+$/, 'command is one program name or path, never a shell string'),
      args: z.array(argvWord).max(64).default([]),
      timeout_seconds: z.int().min(1).max(86400).default(600),
      output_file: relativePath.default('relais/BUILDER_RESULT.json'),
    })
    .refine((d) => !(SHELLS.test(d.command) && d.args.some((a) => /^-\w*c/.test(a))), {
      message: 'a shell with -c is a shell string in disguise: point command at the driver program itself',
      path: ['command'],
    }),
);

/** One phase's caps in `workflow.phases` (null: none). */
const phaseBudget = z
  .strictObject({
    max_cost_usd: z.number().positive().max(100_000).nullable().default(null),
    max_calls: z.int().min(1).max(100_000).nullable().default(null),
  })
  .prefault({});

export const configSchema = lazySchema(() =>
  z
    .strictObject({
      $schema: z.string().optional(),
      version: z.literal('1.0').default('1.0'),
      product_name: z.string().default('relais'),
      workspace_dir: z
        .string()
        .regex(
          /^(?!\.{1,2}$)(?!\.git$)[A-Za-z0-9_.-]+$/,
          'workspace_dir is one folder name at the repository root (not ".", ".." or ".git")',
        )
        .default('relais'),
      project: z
        .strictObject({
          goal: z.string().max(4000).default(''),
          goal_file: relativePath.nullable().default('PRD.md'),
        })
        .prefault({}),
      runner: z
        .strictObject({
          require_git: z.literal(true).default(true),
          max_tick_seconds: z.int().min(1).max(86400).default(900),
          commit_on_success: z.boolean().default(true),
          crash_cleanup: z
            .strictObject({
              validate_runner_json_files: z.boolean().default(true),
            })
            .prefault({}),
          render_report_md: z
            .strictObject({
              enabled: z.boolean().default(true),
              max_chars: z.int().min(500).max(200000).default(6000),
            })
            .prefault({}),
        })
        .prefault({}),
      claude_code_cli: z
        .strictObject({
          command: z
            .string()
            .min(1)
            .max(500)
            .regex(/^[^\s;&|`$<>]+$/, 'command is one program name or path, never a shell string')
            .default('claude'),
          extra_env: z.record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/), z.string()).default({}),
        })
        .prefault({}),
      agents: z
        .strictObject({
          orchestrator: agentRole.prefault({ model: 'opus', fallback_model: 'sonnet' }),
          builder: agentRole.prefault({ model: 'sonnet', fallback_model: 'haiku' }),
          spec: agentRole.prefault({ model: 'opus', fallback_model: 'sonnet' }),
          dev: agentRole.prefault({ model: 'sonnet', fallback_model: 'haiku' }),
          qa: agentRole.prefault({ model: 'sonnet', fallback_model: 'haiku' }),
          planner: agentRole.prefault({ model: 'opus', fallback_model: 'sonnet' }),
          /** `relais cycle init`'s codebase mapper (seed 003 P12): reads the repository, writes the living docs. */
          mapper: agentRole.prefault({ model: 'sonnet', fallback_model: 'haiku' }),
        })
        .prefault({}),
      orchestrator: z
        .strictObject({
          max_turns: z.int().min(1).max(10).default(1),
          max_parse_retries_per_tick: z.int().min(0).max(1).default(1),
          max_budget_usd: z.number().positive().max(1000).default(0.4),
          timeout_seconds: z.int().min(1).max(86400).default(300),
        })
        .prefault({}),
      builder: z
        .strictObject({
          /** The mode the orchestrator is told to prefer. */
          default_mode: z.enum(['claude_code', 'patch', 'cursor']).default('claude_code'),
          allow_patch_mode: z.boolean().default(true),
          patch: z
            .strictObject({
              max_patch_attempts_per_milestone: z.int().min(0).max(10_000).default(10),
            })
            .prefault({}),
          /** Seed 001 PR5: an external driver, "cursor" by name; null when none is configured. */
          cursor: cursorDriver.nullable().default(null),
          claude_code: z
            .strictObject({
              max_turns: z.int().min(1).max(200).default(8),
              allowed_tools: z
                .string()
                .regex(/^[A-Za-z]+(,[A-Za-z]+)*$/, 'allowed_tools is a comma-separated list of tool names')
                .default('Read,Edit,Glob,Grep,Bash'),
              max_budget_usd: z.number().positive().max(1000).default(1.5),
              strict_builder_json: z.boolean().default(true),
            })
            .prefault({}),
        })
        .prefault({})
        .refine((b) => b.default_mode !== 'cursor' || b.cursor !== null, {
          message:
            'default_mode "cursor" needs a builder.cursor driver (command, args, timeout_seconds, output_file)',
          path: ['cursor'],
        }),
      scope: z
        .strictObject({
          default_allowed_globs: z
            .array(fenceGlob)
            .min(1)
            .max(64)
            .default(['src/**', 'app/**', 'packages/**', 'tests/**', 'README.md']),
          default_forbidden_globs: z
            .array(glob)
            .max(64)
            .default(['.git/**', 'relais/**', '**/.env*', '**/*secret*', '**/*token*', '**/node_modules/**']),
          default_allow_new_files: z.boolean().default(false),
          default_allow_lockfile_changes: z.boolean().default(false),
          lockfiles: z
            .array(z.string().min(1))
            .max(64)
            .default(['pnpm-lock.yaml', 'package-lock.json', 'yarn.lock', 'bun.lockb']),
        })
        .prefault({}),
      diff_limits: z
        .strictObject({
          default_max_files_touched: z.int().min(1).max(500).default(12),
          default_max_lines_changed: z.int().min(1).max(20000).default(400),
        })
        .prefault({}),
      verification: z
        .strictObject({
          execution_mode: z.literal('argv_no_shell').default('argv_no_shell'),
          max_param_len: z.int().min(1).max(4096).default(128),
          reject_whitespace_in_params: z.boolean().default(true),
          reject_dotdot: z.boolean().default(true),
          reject_metachars_regex: z
            .string()
            .refine(isValidRegex, { message: 'not a valid regular expression' })
            .default('[;&|$\\\\><(){}\\[\\]`\\n\\r\\t\\0\'"*?!~#]'),
          timeout_fast_seconds: z.int().min(1).max(86400).default(90),
          timeout_slow_seconds: z.int().min(1).max(86400).default(600),
          max_log_bytes_per_run: z.int().min(1024).max(50_000_000).default(1_000_000),
          templates: z.array(verificationTemplate).max(64).default([]),
        })
        .prefault({})
        .superRefine((v, ctx) => {
          const seen = new Set<string>();
          v.templates.forEach((t, i) => {
            if (seen.has(t.id))
              ctx.addIssue({
                code: 'custom',
                path: ['templates', i, 'id'],
                message: `duplicate template id "${t.id}"`,
              });
            seen.add(t.id);
            for (const name of placeholdersIn(t.args)) {
              if (!(name in t.params)) {
                ctx.addIssue({
                  code: 'custom',
                  path: ['templates', i, 'args'],
                  message: `placeholder {{${name}}} has no entry in params`,
                });
              }
            }
          });
        }),
      budgets: z
        .strictObject({
          per_milestone: z
            .strictObject({
              max_ticks: z.int().min(1).default(200),
              max_orchestrator_calls: z.int().min(1).default(260),
              max_builder_calls: z.int().min(1).default(200),
              max_verify_runs: z.int().min(0).default(600),
              max_estimated_cost_usd: z.number().min(0).default(80),
            })
            .prefault({}),
          warn_at_fraction: z.number().gt(0).max(1).default(0.8),
        })
        .prefault({}),
      history: z
        .strictObject({
          enabled: z.boolean().default(true),
          max_mb: z.number().positive().default(500),
          include_diff_patch: z.boolean().default(true),
          include_verify_log: z.boolean().default(true),
        })
        .prefault({}),
      /** The Ralphy workflow (seed 002): engine, timeouts in seconds (§6), retries, branch, stack (§10). */
      workflow: z
        .strictObject({
          implementation_engine: z.enum(['ticks', 'single', 'cycle']).default('ticks'),
          timeouts: z
            .strictObject({
              specification: z.int().min(1).default(1800),
              implementation: z.int().min(1).default(14400),
              qa: z.int().min(1).default(1800),
              pr: z.int().min(1).default(600),
              /** One agent run; the single dev-agent run is bounded by the implementation timeout instead. */
              agent: z.int().min(1).default(300),
            })
            .prefault({}),
          agent_retries: z.int().min(0).max(5).default(2),
          /** Stop the workflow (FAILED, budget_exhausted) once its agents reported this much spend; null: no cap. */
          max_cost_usd: z.number().positive().max(100_000).nullable().default(50),
          /** Per agent run of the spec, dev and QA agents (Claude Code's --max-budget-usd). */
          agent_max_budget_usd: z.number().positive().max(1000).default(10),
          /**
           * `bypassPermissions` (seed 002's --dangerously-skip-permissions; the judge fences what it
           * changed) or `acceptEdits`: then any other tool call not pre-approved is denied, and the
           * workflow asks the human (a "needs input" gate) whether to allow it.
           */
          permission_mode: z.enum(['bypassPermissions', 'acceptEdits']).default('bypassPermissions'),
          /** The one dev-agent run of the `single` engine may touch this much (the judge's ceiling). */
          single_max_files_touched: z.int().min(1).max(5000).default(200),
          single_max_lines_changed: z.int().min(1).max(200_000).default(20_000),
          max_ticks_per_task: z.int().min(1).max(20).default(3),
          /**
           * Issue 19: how many TASKS.md tasks the `ticks` engine runs at once, each in its own
           * runner-owned worktree (`ralphy start --parallel N` overrides it); 1 is one task at a time.
           */
          parallel: z.int().min(1).max(16).default(1),
          /**
           * Issue 19, best of N: how many builders try a task the spec marks `- **Risk**: high` in
           * TASKS.md, each in its own worktree; the runner lands the one its own verdict prefers.
           * 1: risky tasks run once, like the others (`ralphy start --attempts K` applies to every task).
           */
          best_of: z.int().min(1).max(8).default(1),
          max_turns: z
            .strictObject({
              spec: z.int().min(1).default(30),
              dev: z.int().min(1).default(200),
              qa: z.int().min(1).default(30),
            })
            .prefault({}),
          agent_tools: z
            .string()
            .regex(/^[A-Za-z]+(,[A-Za-z]+)*$/, 'agent_tools is a comma-separated list of tool names')
            .default('Read,Write,Edit,Glob,Grep,Bash'),
          branch_prefix: z
            .string()
            .regex(/^[A-Za-z0-9._/-]*$/, 'branch_prefix is letters, digits and . _ / -')
            .default('ralphy/'),
          /**
           * Caps per agent phase (issue 18): spend as the agents report it and agent calls, on top
           * of the workflow-wide max_cost_usd. Null: no cap for that phase. A phase that reaches
           * one stops (FAILED, phase_budget_exhausted); raising it lets ralphy start resume.
           */
          phases: z
            .strictObject({
              planning: phaseBudget,
              specification: phaseBudget,
              implementation: phaseBudget,
              qa: phaseBudget,
            })
            .prefault({}),
          stack: z
            .strictObject({
              language: z.string().default(''),
              /** Null: the breaker takes the `test` verification template's command (breaker-settings.ts). */
              test_command: z.string().nullable().default(null),
            })
            .prefault({}),
        })
        .prefault({}),
      /**
       * Issue 14: every agent and verification runs in an OS sandbox (bubblewrap). "off" is the
       * explicit opt-out, warned about on every run; the object form sets the network per role and
       * extra writable folders outside the repository (a tool's cache, say).
       */
      sandbox: z
        .union([
          z.enum(['bwrap', 'off']),
          z.strictObject({
            mode: z.enum(['bwrap', 'off']).default('bwrap'),
            network: z
              .strictObject({
                /** Agents reach their model's API over the host network. */
                agents: z.boolean().default(true),
                /** Verification commands run with no network at all unless this is true. */
                verification: z.boolean().default(false),
                // One agent role on its own, overriding `agents` for it (absent: `agents` applies).
                // The cycle's roles run as these: its planner as orchestrator, implementer as
                // builder, verifier as qa.
                orchestrator: z.boolean().optional(),
                builder: z.boolean().optional(),
                spec: z.boolean().optional(),
                dev: z.boolean().optional(),
                qa: z.boolean().optional(),
                planner: z.boolean().optional(),
                mapper: z.boolean().optional(),
              })
              .prefault({}),
            /**
             * Repository paths (globs, reduced to their folders like a task's) every verification
             * may write besides the task's own: a tool's cache (`node_modules/.cache/**`,
             * `coverage/**`). Never `.git/` or the workspace; a path that resolves out of the
             * repository through a symlink is dropped.
             */
            verification_writable: z
              .array(
                z
                  .string()
                  .min(1)
                  .max(300)
                  .regex(
                    /^(?!\/)(?!.*(?:^|\/)\.\.(?:\/|$))[^\0]*$/,
                    'a repository-relative path without ".."',
                  ),
              )
              .max(32)
              .default([]),
            writable_outside: z
              .array(
                z
                  .string()
                  .min(2)
                  .max(500)
                  .regex(/^\/(?!.*(?:^|\/)\.\.(?:\/|$))[^\0]*$/, 'an absolute path without ".."'),
              )
              .max(32)
              .default([]),
          }),
        ])
        .default('bwrap'),
      /** Seed 002 §6.1, in seconds and bytes. */
      circuit_breaker: z
        .strictObject({
          enabled: z.boolean().default(true),
          inactivity_timeout: z.int().min(1).default(60),
          max_repeated_errors: z.int().min(2).default(3),
          task_stagnation_timeout: z.int().min(1).default(600),
          max_output_size: z.int().min(1024).default(524288),
          max_attempts: z.int().min(1).default(3),
          pr_inactivity_timeout: z.int().min(1).default(120),
          test_inactivity_timeout: z.int().min(1).default(300),
        })
        .prefault({}),
      /**
       * Seed 004, the Relay planner: the PLANNING phase that opens `ralphy start`, and `relais plan`.
       * Its model is `agents.planner`; it may only read the repository.
       */
      planner: z
        .strictObject({
          /** Whether `ralphy start` plans with the human before the spec (`relais plan` always runs). */
          enabled: z.boolean().default(true),
          /** Question rounds before only the proceed gate is left (seed 004: 1 is the aim, 2 normal). */
          max_rounds: z.int().min(1).max(10).default(3),
          max_questions_per_round: z.int().min(1).max(30).default(8),
          /** Read-only tools the planner may use to check the code. */
          tools: z
            .array(z.enum(['Read', 'Glob', 'Grep']))
            .max(3)
            .default(['Read', 'Glob', 'Grep']),
          max_turns: z.int().min(1).max(50).default(8),
          max_budget_usd: z.number().positive().max(1000).default(1),
          timeout_seconds: z.int().min(1).max(86400).default(300),
          /** Characters of discussion in the context dump (the oldest messages are left out first). */
          max_discussion_chars: z.int().min(1000).max(200_000).default(30_000),
          /** Learnings shown to the planner, and rendered into relais/FACTS.md for the orchestrator. */
          max_learnings_in_context: z.int().min(0).max(500).default(50),
          facts_max_learnings: z.int().min(0).max(500).default(30),
          facts_max_chars: z.int().min(200).max(20_000).default(2500),
        })
        .prefault({}),
      /** Seed 003, the deadf cycle (`relais cycle`, and `ralphy start`'s `cycle` engine): its policy and roles. */
      cycle: cycleSectionSchema,
      /** The Codex CLI, for cycle roles whose provider is `codex`. */
      codex_cli: codexCliSchema,
      /** The PR phase: the git remote to push to, and the GitHub CLI. */
      pr: z
        .strictObject({
          remote: z
            .string()
            .regex(/^[A-Za-z0-9._-]+$/, 'remote is a git remote name')
            .default('origin'),
          gh_command: z
            .string()
            .regex(/^[^\s;&|`$<>]+$/, 'gh_command is one program name or path')
            .default('gh'),
          draft: z.boolean().default(false),
        })
        .prefault({}),
      /**
       * Seed 001 PR2, run-wide caps of one `relais loop`: they hold across milestones, so an
       * orchestrator that invents a new milestone every tick (fresh per-milestone counters) cannot
       * spend without limit.
       */
      loop: z
        .strictObject({
          max_ticks_per_run: z.int().min(1).default(50),
          max_calls_per_run: z.int().min(1).default(150),
          max_cost_usd_per_run: z.number().min(0).default(25),
        })
        .prefault({}),
    })
    .superRefine((config, ctx) => {
      const driver = config.builder.cursor;
      if (driver && !driver.output_file.startsWith(`${config.workspace_dir}/`)) {
        ctx.addIssue({
          code: 'custom',
          path: ['builder', 'cursor', 'output_file'],
          message: `the driver's output file must be inside the workspace (${config.workspace_dir}/), where git does not see it`,
        });
      }
      for (const [role, agent] of Object.entries(config.agents)) {
        if (agent.provider === 'external' && !driver)
          ctx.addIssue({
            code: 'custom',
            path: ['agents', role, 'provider'],
            message: `provider "external" needs a builder.cursor driver (command, args, timeout_seconds, output_file)`,
          });
      }
    }),
);

export type RelaisConfig = z.infer<typeof configSchema>;
export type VerificationTemplate = RelaisConfig['verification']['templates'][number];

/** `{{name}}` placeholders used by verification template args. */
export function placeholdersIn(args: readonly string[]): string[] {
  const names: string[] = [];
  for (const arg of args) {
    for (const match of arg.matchAll(/\{\{([A-Za-z0-9_]+)\}\}/g)) {
      if (match[1] !== undefined) names.push(match[1]);
    }
  }
  return names;
}

function isValidRegex(source: string): boolean {
  try {
    new RegExp(source);
    return true;
  } catch {
    return false;
  }
}
