import { basename, extname } from 'node:path';
import { type Git, splitNul } from '../../judge/git.js';
import { readRepoFile } from '../track-docs.js';

/**
 * What the runner itself reads of a repository before the mapper agent writes anything (seed 003
 * P12): tracked files, manifests, scripts, test files and git history, gathered deterministically
 * so the agent works from facts, not from guesses. Every file is read as untrusted and capped.
 */

export interface RepoSurvey {
  readonly tracked: readonly string[];
  readonly commits: number;
  readonly facts: string;
}

const MANIFESTS = [
  'package.json',
  'pyproject.toml',
  'setup.py',
  'requirements.txt',
  'Cargo.toml',
  'go.mod',
  'Gemfile',
  'pom.xml',
  'build.gradle',
  'build.gradle.kts',
  'composer.json',
  'Makefile',
  'CMakeLists.txt',
  'tsconfig.json',
  'deno.json',
];

/** The facts block is part of a prompt: keep it bounded whatever the repository's size. */
const FACTS_MAX_CHARS = 14_000;

export async function surveyRepo(git: Git, root: string): Promise<RepoSurvey> {
  const tracked = splitNul(await git.ok(['ls-files', '-z']).catch(() => Buffer.alloc(0)));
  const count = await git.run(['rev-list', '--count', 'HEAD']);
  const commits = count.code === 0 ? Number.parseInt(count.stdout.toString('utf8').trim(), 10) || 0 : 0;
  const sections: string[] = [];
  sections.push(`## Tracked files\n${tracked.length} files; ${commits} commits.`);
  sections.push(`## Top folders\n${topCounts(tracked.map(topFolder)).join('\n') || '(none)'}`);
  sections.push(
    `## Extensions\n${topCounts(tracked.map((p) => extname(p) || basename(p))).join('\n') || '(none)'}`,
  );
  const manifests = MANIFESTS.filter((m) => tracked.includes(m));
  for (const name of manifests) {
    const text = await readRepoFile(root, name, 200_000);
    if (!text) continue;
    sections.push(`## ${name}\n${name === 'package.json' ? packageSummary(text) : clip(text, 1500)}`);
  }
  const tests = tracked.filter(isTestPath);
  sections.push(
    `## Test files\n${tests.length} test files${
      tests.length
        ? `, e.g.\n${tests
            .slice(0, 12)
            .map((t) => `- ${t}`)
            .join('\n')}`
        : ''
    }`,
  );
  const ci = tracked.filter((p) => p.startsWith('.github/workflows/') || p === '.gitlab-ci.yml').slice(0, 6);
  if (ci.length) sections.push(`## CI\n${ci.map((p) => `- ${p}`).join('\n')}`);
  const readme = tracked.find((p) => /^readme(\.md|\.txt|\.rst)?$/i.test(p));
  if (readme) {
    const text = await readRepoFile(root, readme, 200_000);
    if (text) sections.push(`## ${readme} (start)\n${clip(text, 2500)}`);
  }
  if (commits > 0) {
    const log = await git.run(['log', '-n', '15', '--no-merges', '--format=%h %ad %s', '--date=short']);
    if (log.code === 0) sections.push(`## Recent commits\n${log.stdout.toString('utf8').trim()}`);
  }
  return { tracked, commits, facts: clip(sections.join('\n\n'), FACTS_MAX_CHARS) };
}

export function isTestPath(path: string): boolean {
  const name = basename(path).toLowerCase();
  return /(^|\/)(tests?|__tests__|spec)\//.test(path) || /\.(test|spec)\.|^test_|_test\.(go|py)$/.test(name);
}

function topFolder(path: string): string {
  const at = path.indexOf('/');
  return at < 0 ? '(root)' : `${path.slice(0, at)}/`;
}

function topCounts(keys: readonly string[], limit = 12): string[] {
  const counts = new Map<string, number>();
  for (const k of keys) counts.set(k, (counts.get(k) ?? 0) + 1);
  return [...counts]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, limit)
    .map(([k, n]) => `- ${k}: ${n}`);
}

/** name, description, type, engines, scripts (the test command among them), dependency names. */
function packageSummary(text: string): string {
  let pkg: Record<string, unknown>;
  try {
    pkg = JSON.parse(text) as Record<string, unknown>;
  } catch {
    return '(does not parse as JSON)';
  }
  const keys = (v: unknown) => (v && typeof v === 'object' ? Object.keys(v as object).join(', ') : '');
  const scripts =
    pkg.scripts && typeof pkg.scripts === 'object'
      ? Object.entries(pkg.scripts as Record<string, unknown>).map(
          ([k, v]) => `  - ${k}: ${clip(String(v), 160)}`,
        )
      : [];
  return [
    `name: ${String(pkg.name ?? '')}`,
    `description: ${clip(String(pkg.description ?? ''), 300)}`,
    `type: ${String(pkg.type ?? 'commonjs')}`,
    `engines: ${JSON.stringify(pkg.engines ?? {})}`,
    `scripts:${scripts.length ? `\n${scripts.slice(0, 25).join('\n')}` : ' (none)'}`,
    `dependencies: ${clip(keys(pkg.dependencies), 600) || '(none)'}`,
    `devDependencies: ${clip(keys(pkg.devDependencies), 600) || '(none)'}`,
  ].join('\n');
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}\n[... cut at ${max} characters]`;
}
