import { lstat, mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as z from 'zod';
import type { AgentRequest, AgentRunner } from '../../agents/agent-run.js';
import type { EngineBus } from '../../events.js';
import type { Git } from '../../judge/git.js';
import { parseModelJson } from '../../protocol/model-json.js';
import { writeFileAtomic } from '../../workspace/atomic-write.js';
import { PACKAGE_ROOT } from '../../workspace/package-assets.js';
import { oneLine } from '../../workspace/printable.js';
import { resolvesUnderRoot } from '../../workspace/safe-path.js';
import { readRepoFile } from '../track-docs.js';
import { BROWNFIELD_MIN_FILES, type Detection, detectProject } from './detect.js';
import { surveyRepo } from './facts.js';
import {
  estimateTokens,
  LIVING_DOCS,
  LIVING_DOCS_TOKEN_CAP,
  type LivingDocName,
  livingDocsDir,
  mapperAnswerSchema,
  renderLivingDocs,
  totalTokens,
  trimToCap,
} from './living-docs.js';

/**
 * Seed 003 P12, the codebase mapper: "runs before P2, outside the cycle loop", detects the kind
 * of project, and for a brownfield one has the mapper agent write the seven living docs into
 * `<docs_dir>/p12/` (the seed's `.deadf/p12/`, as its seed docs live in `<docs_dir>/`), then the
 * marker `P12_DONE`. "P12 failure degrades gracefully to greenfield brainstorm": nothing here
 * throws; any failure is a logged reason and a greenfield result.
 */

export interface MapperOptions {
  readonly root: string;
  /** `cycle.docs_dir`, relative to the root. */
  readonly docsDir: string;
  /** The config's workspace_dir (runner-owned, never project code). */
  readonly workspaceDir: string;
  readonly git: Git;
  readonly runner: AgentRunner;
  readonly bus: EngineBus;
  readonly signal: AbortSignal;
  readonly model: string;
  readonly fallbackModel: string | null;
  readonly timeoutMs: number;
  /** Map again even when a previous mapping's docs are there. */
  readonly remap: boolean;
  readonly now: () => Date;
}

export interface MapResult {
  readonly detection: Detection;
  /** What the brainstorm is told: brownfield context, or none (greenfield, a degraded mapping). */
  readonly kind: 'greenfield' | 'brownfield' | 'returning';
  /** The living docs now on disk (written or kept), relative path -> text; empty for greenfield. */
  readonly docs: Readonly<Record<string, string>>;
  readonly tokens: number;
  /** Why the mapping degraded to greenfield, or null. */
  readonly degraded: string | null;
  /** Mapper agent calls made (0 when nothing needed mapping). */
  readonly agentCalls: number;
  /** Docs trimmed by the runner after the re-ask (the agent still wrote too much). */
  readonly trimmed: boolean;
}

export const markerSchema = z.strictObject({
  version: z.literal(1),
  kind: z.enum(['greenfield', 'brownfield']),
  at: z.iso.datetime({ offset: true }),
  commit: z
    .string()
    .regex(/^[0-9a-f]{40}$/)
    .nullable(),
  tokens: z.int().min(0),
  degraded: z.string().max(1000).nullable(),
});

export async function runMapper(o: MapperOptions): Promise<MapResult> {
  let detection: Detection = { kind: 'greenfield', why: 'not detected', projectFiles: 0 };
  try {
    const survey = await surveyRepo(o.git, o.root);
    detection = await detectProject(o.root, o.docsDir, survey.tracked, o.workspaceDir);
    log(o.bus, 'info', `mapper: ${detection.kind} project (${detection.why})`);
    if (detection.kind === 'returning' && !o.remap) {
      const kept = await readLivingDocs(o.root, o.docsDir);
      if (kept) return { ...result(detection, 'returning', kept), agentCalls: 0 };
    }
    // A returning project maps again only when it has code (greenfield before, or --remap).
    if (detection.projectFiles < BROWNFIELD_MIN_FILES) return greenfield(o, detection, null, 0);
    const mapped = await askMapper(o, survey.facts);
    if (!mapped.ok) return greenfield(o, detection, mapped.reason, mapped.calls);
    const docs = await writeLivingDocs(o, mapped.files);
    await writeMarker(o, 'brownfield', totalTokens(mapped.files), null);
    return { ...result(detection, 'brownfield', docs), agentCalls: mapped.calls, trimmed: mapped.trimmed };
  } catch (error) {
    return greenfield(o, detection, `mapper error: ${(error as Error).message}`, 0);
  }
}

function result(
  detection: Detection,
  kind: MapResult['kind'],
  docs: Record<string, string>,
): Omit<MapResult, 'agentCalls'> {
  const tokens = Object.values(docs).reduce((n, t) => n + estimateTokens(t), 0);
  return { detection, kind, docs, tokens, degraded: null, trimmed: false };
}

async function greenfield(
  o: MapperOptions,
  detection: Detection,
  degraded: string | null,
  agentCalls: number,
): Promise<MapResult> {
  if (degraded) log(o.bus, 'warn', `mapper failed, continuing as greenfield: ${oneLine(degraded, 400)}`);
  // The marker is best effort: a folder we cannot write is one more reason, never fatal.
  await writeMarker(o, 'greenfield', 0, degraded).catch((e: Error) =>
    log(o.bus, 'warn', `mapper: P12_DONE not written: ${e.message}`),
  );
  return { detection, kind: 'greenfield', docs: {}, tokens: 0, degraded, agentCalls, trimmed: false };
}

type Mapped =
  | { ok: true; files: Record<LivingDocName, string>; calls: number; trimmed: boolean }
  | { ok: false; reason: string; calls: number };

/**
 * One call; a second with the reason when the answer does not validate or is over the cap; over
 * the cap after that, the runner trims (never writes more than the cap).
 */
async function askMapper(o: MapperOptions, facts: string): Promise<Mapped> {
  const system = await readFile(join(PACKAGE_ROOT, 'prompts', 'mapper.system.txt'), 'utf8');
  const user = mapperUserPrompt(facts);
  let prompt = user;
  for (let attempt = 1; attempt <= 2; attempt++) {
    const outcome = await o.runner.run(request(o, system, prompt, attempt), o.bus);
    if (outcome.failure !== null || outcome.text === null)
      return { ok: false, reason: `mapper agent: ${outcome.failure ?? 'no answer'}`, calls: attempt };
    const parsed = parseModelJson(outcome.text, mapperAnswerSchema);
    if (!parsed.ok) {
      if (attempt === 2)
        return { ok: false, reason: `mapper answer invalid twice: ${parsed.reason}`, calls: 2 };
      prompt = `${user}\n\nYour previous answer was rejected: ${parsed.reason}. Answer again with the one JSON object only.`;
      continue;
    }
    const files = renderLivingDocs(parsed.value);
    const tokens = totalTokens(files);
    if (tokens <= LIVING_DOCS_TOKEN_CAP) return { ok: true, files, calls: attempt, trimmed: false };
    if (attempt === 2) {
      log(o.bus, 'warn', `mapper: the docs are ${tokens} tokens after a re-ask; trimmed to the cap`);
      return { ok: true, files: trimToCap(files), calls: 2, trimmed: true };
    }
    log(o.bus, 'info', `mapper: the docs are ${tokens} tokens, over the cap; asking for shorter docs`);
    prompt = `${user}\n\nYour previous answer was valid but its seven docs total about ${tokens} tokens (4 characters a token, the loading map included); the cap is ${LIVING_DOCS_TOKEN_CAP}. Write them again, shorter: keep the facts that matter most.`;
  }
  return { ok: false, reason: 'unreachable', calls: 2 };
}

export function mapperUserPrompt(facts: string): string {
  return [
    'Map this repository into the seven living docs. The runner gathered these facts from git and the manifests; read more files as you need.',
    '',
    '--- FACTS (from the runner) ---',
    facts,
    '--- END FACTS ---',
  ].join('\n');
}

function request(o: MapperOptions, system: string, user: string, attempt: number): AgentRequest {
  return {
    role: 'mapper',
    attempt,
    systemPrompt: system,
    userPrompt: user,
    model: o.model,
    fallbackModel: o.fallbackModel,
    maxTurns: 30,
    maxBudgetUsd: 2,
    tools: ['Read', 'Glob', 'Grep'],
    permissionMode: 'plan',
    streaming: false,
    cwd: o.root,
    timeoutMs: o.timeoutMs,
    signal: o.signal,
  };
}

/** The seven docs of an earlier mapping, when every one is there and readable; else null. */
async function readLivingDocs(root: string, docsDir: string): Promise<Record<string, string> | null> {
  const docs: Record<string, string> = {};
  for (const name of LIVING_DOCS) {
    const path = `${livingDocsDir(docsDir)}/${name}`;
    const text = await readRepoFile(root, path);
    if (!text) return null;
    docs[path] = text;
  }
  return docs;
}

async function writeLivingDocs(
  o: MapperOptions,
  files: Record<LivingDocName, string>,
): Promise<Record<string, string>> {
  const written: Record<string, string> = {};
  for (const name of LIVING_DOCS) {
    const path = `${livingDocsDir(o.docsDir)}/${name}`;
    await writeSafely(o.root, path, files[name]);
    written[path] = files[name];
  }
  return written;
}

async function writeMarker(
  o: MapperOptions,
  kind: 'greenfield' | 'brownfield',
  tokens: number,
  degraded: string | null,
): Promise<void> {
  const head = await o.git.run(['rev-parse', '--verify', '-q', 'HEAD']);
  const commit = head.code === 0 ? head.stdout.toString('utf8').trim() : null;
  const marker = markerSchema.parse({
    version: 1,
    kind,
    at: o.now().toISOString(),
    commit: commit && /^[0-9a-f]{40}$/.test(commit) ? commit : null,
    tokens,
    degraded: degraded ? oneLine(degraded, 1000) : null,
  });
  await writeSafely(o.root, `${livingDocsDir(o.docsDir)}/P12_DONE`, `${JSON.stringify(marker, null, 2)}\n`);
}

/** Atomic, inside the repository, never through a link (the file or a folder on the way). */
export async function writeSafely(root: string, relPath: string, text: string): Promise<void> {
  const parts = relPath.split('/');
  for (let n = 1; n <= parts.length; n++) {
    const info = await lstat(join(root, ...parts.slice(0, n))).catch(() => null);
    if (info?.isSymbolicLink()) throw new Error(`${parts.slice(0, n).join('/')} is a symbolic link`);
    if (info && n === parts.length && !info.isFile()) throw new Error(`${relPath} is not a regular file`);
  }
  if (!(await resolvesUnderRoot(root, relPath)))
    throw new Error(`${relPath} resolves outside the repository`);
  await mkdir(join(root, ...parts.slice(0, -1)), { recursive: true });
  await writeFileAtomic(join(root, relPath), text);
}

function log(bus: EngineBus, level: 'info' | 'warn', message: string): void {
  bus.emit({ type: 'log', level, message });
}
