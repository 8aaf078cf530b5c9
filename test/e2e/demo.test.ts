import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../support/project.js';

// README command 1: the bundled offline demo must keep working (real claude, scripted model).

describe('npm run demo', () => {
  it('runs two real ticks offline: a verified commit, then a cheating builder stopped and rolled back', async () => {
    const demoDir = mkdtempSync(join(tmpdir(), 'relais-demo-test-'));
    const child = spawn(process.execPath, [join(REPO_ROOT, 'dist/demo/run-demo.js')], {
      env: { ...process.env, CI: 'true', RELAIS_DEMO_DIR: demoDir },
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
    rmSync(demoDir, { recursive: true, force: true });
    expect(code, out).toBe(0);
    expect(out).toMatch(/Result: SUCCESS SUCCESS \(1 files, \+1\/-1, 0 new\) committed [0-9a-f]{12}/);
    expect(out).toContain('Result: STOP STOP_SCOPE_VIOLATION_OUTSIDE_ALLOWED');
    expect(out).toContain('builder tool Edit');
    expect(out).toContain('Tick 1 committed a verified fix; tick 2 was stopped and rolled back');
  });
});
