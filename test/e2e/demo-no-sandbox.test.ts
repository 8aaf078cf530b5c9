import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const REPO_ROOT = join(import.meta.dirname, '../..');

// README command 1 on a machine without bubblewrap (a fresh Debian, macOS): the demo still runs
// to COMPLETED, says plainly that its throwaway project opted out of the sandbox, and why a user's
// own runs would not. The machine here has bwrap, so the test hides it: a PATH of links to every
// program of the system's folders except bwrap.

const scratch = mkdtempSync(join(tmpdir(), 'relais-demo-nobwrap-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

function pathWithoutBwrap(): string {
  const bin = join(scratch, 'bin');
  mkdirSync(bin);
  for (const dir of ['/usr/local/bin', '/usr/bin', '/bin', '/usr/sbin', '/sbin']) {
    if (!existsSync(dir)) continue;
    for (const name of readdirSync(dir)) {
      if (name === 'bwrap' || existsSync(join(bin, name))) continue;
      symlinkSync(join(dir, name), join(bin, name));
    }
  }
  return bin;
}

describe('npm run demo without bubblewrap', () => {
  it('opts its throwaway project out of the sandbox, says so, and completes', async () => {
    const demoDir = join(scratch, 'demo');
    mkdirSync(demoDir);
    const child = spawn(process.execPath, [join(REPO_ROOT, 'dist/demo/run-demo.js')], {
      env: { ...process.env, CI: 'true', RELAIS_DEMO_DIR: demoDir, PATH: pathWithoutBwrap() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
    });
    child.stderr.on('data', (d: Buffer) => {
      out += d.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code, out).toBe(0);
    expect(out).toContain('No OS sandbox here: bwrap (bubblewrap) is not installed or not on PATH.');
    expect(out).toContain('Your own runs refuse to start like this until you install bubblewrap');
    const [demo] = readdirSync(demoDir);
    const repo = join(demoDir, demo ?? '', 'demo-project');
    expect(JSON.parse(readFileSync(join(repo, 'relais.config.json'), 'utf8')).sandbox).toBe('off');
    // The fence before the write is Claude Code's own hook, which needs no OS sandbox.
    expect(out).toContain(
      'Relais refused this write before it happened: tests/slugify.test.js is outside this task',
    );
    expect(out).toContain('Workflow COMPLETED https://github.invalid/relais-demo/demo-project/pull/1');
    // Every tick says the sandbox was off.
    expect(out).toContain('sandbox is "off" in relais.config.json: agents and verifications run unprotected');
  }, 300_000);
});
