// npm run bench: what the bubblewrap sandbox (issue 14) costs per process start, through the real
// process port (dist/engine/supervise/run-process.js): an "agent start" (host network, the
// repository writable) and a "verification" (no network, writable only src/), each a `node -e`
// that exits at once, sandboxed and not. Prints medians and the ratio sandboxed / unsandboxed.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { runProcess } = await import(join(ROOT, 'dist/engine/supervise/run-process.js'));
const { agentSandbox, resolveSandbox, verificationSandbox } = await import(
  join(ROOT, 'dist/engine/sandbox/sandbox.js')
);
const { configSchema } = await import(join(ROOT, 'dist/engine/protocol/config.js'));
const RUNS = Number(process.env.BENCH_RUNS ?? 15);

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

const base = mkdtempSync(join(tmpdir(), 'relais-bench-sandbox-'));
const root = join(base, 'repo');
for (const dir of ['.git', 'relais', 'src']) mkdirSync(join(root, dir), { recursive: true });
writeFileSync(join(root, 'src/a.ts'), 'export const a = 1;\n');
const sandbox = await resolveSandbox(configSchema.parse({}), root, process.env);
if (sandbox.kind !== 'bwrap') {
  console.log(
    `sandbox-cost: no bubblewrap sandbox here (${sandbox.reason ?? sandbox.kind}); nothing measured`,
  );
  process.exit(0);
}

async function timed(policy) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const started = process.hrtime.bigint();
    const r = await runProcess({
      cmd: process.execPath,
      args: ['-e', '0'],
      cwd: root,
      env: process.env,
      sandbox: policy,
    });
    if (r.exitCode !== 0) throw new Error(`run failed: ${r.stderrTail}`);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  return median(times);
}

try {
  const rows = [
    ['agent start', agentSandbox(sandbox)],
    ['verification', verificationSandbox(sandbox, ['src/**'])],
  ];
  for (const [name, policy] of rows) {
    const plain = await timed(undefined);
    const boxed = await timed(policy);
    console.log(
      `sandbox-cost ${name}: unsandboxed ${plain.toFixed(1)} ms, bwrap ${boxed.toFixed(1)} ms (median of ${RUNS}), ratio ${(boxed / plain).toFixed(2)}x, +${(boxed - plain).toFixed(1)} ms`,
    );
  }
} finally {
  rmSync(base, { recursive: true, force: true });
}
