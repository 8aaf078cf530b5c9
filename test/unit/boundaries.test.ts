import { describe, expect, it } from 'vitest';
import { boundaryViolations, sourceFiles, specifiersOf } from '../support/import-graph.js';
import { REPO_ROOT } from '../support/project.js';

// docs/ARCHITECTURE.md "Layers (imports point down only)", enforced: this test is the rule, not a comment.

describe('layer boundaries over the import graph', () => {
  const files = sourceFiles(REPO_ROOT);

  it('reads every source file of the three layers', () => {
    const paths = [...files.keys()];
    expect(paths).toContain('source/engine/index.ts');
    expect(paths).toContain('source/ui/front-end.tsx');
    expect(paths).toContain('source/cli/main.ts');
    expect(paths.length).toBeGreaterThan(250);
  });

  it('the source tree keeps every rule', () => {
    expect(boundaryViolations(files)).toEqual([]);
  });

  it('the CLI reaches the engine through its front door only', () => {
    const engineImports = new Set<string>();
    for (const [file, source] of files)
      if (file.startsWith('source/cli/'))
        for (const s of specifiersOf(source))
          if (s.includes('engine/')) engineImports.add(s.replace(/^(\.\.\/)+/, ''));
    expect([...engineImports]).toEqual(['engine/index.js']);
  });

  describe('planted violations are caught', () => {
    const planted = (path: string, source: string) =>
      boundaryViolations(new Map([...files, [path, source]])).filter((v) => v.file === path);

    it("the UI reaching into the process layer (ui/front-end.tsx's old import)", () => {
      expect(
        planted(
          'source/ui/planted.ts',
          "import { killAllChildrenNow } from '../engine/supervise/run-process.js';\n",
        ),
      ).toEqual([
        {
          file: 'source/ui/planted.ts',
          imports: '../engine/supervise/run-process.js',
          rule: "the UI sees only the engine's public surface: events.ts, gates.ts, protocol/",
        },
      ]);
    });

    it('the UI importing engine internals by type, or by re-export, counts too', () => {
      const found = planted(
        'source/ui/format/planted.ts',
        [
          "import type { WorkspacePaths } from '../../engine/workspace/paths.js';",
          "export { oneLine } from '../../engine/workspace/printable.js';",
          "import type { Code } from '../../engine/protocol/codes.js';",
        ].join('\n'),
      );
      expect(found.map((v) => v.imports)).toEqual([
        '../../engine/workspace/paths.js',
        '../../engine/workspace/printable.js',
      ]);
    });

    it('a CLI command reaching past the front door, statically or dynamically', () => {
      const found = planted(
        'source/cli/commands/planted.ts',
        [
          "import { acquireLock } from '../../engine/workspace/lock.js';",
          "const m = await import('../../engine/tick/run-tick.js');",
          "const app = await import('../../ui/front-end.js');",
          "import { runTick } from '../../engine/index.js';",
          "import { startInkFrontEnd } from '../../ui/index.js';",
        ].join('\n'),
      );
      expect(found.map((v) => v.imports)).toEqual([
        '../../engine/workspace/lock.js',
        '../../engine/tick/run-tick.js',
        '../../ui/front-end.js',
      ]);
    });

    it('the engine importing the UI, the CLI, React or Ink', () => {
      const found = planted(
        'source/engine/tick/planted.ts',
        [
          "import { theme } from '../../ui/theme.js';",
          "import { EXIT } from '../../cli/exit-codes.js';",
          "import { Box } from 'ink';",
          "import React from 'react';",
          "import { z } from 'zod';",
        ].join('\n'),
      );
      expect(found.map((v) => v.imports)).toEqual([
        '../../ui/theme.js',
        '../../cli/exit-codes.js',
        'ink',
        'react',
      ]);
    });

    it("a flow reaching into the tick's phases; the tick's entries are fine", () => {
      const found = planted(
        'source/engine/workflow/planted.ts',
        [
          "import { judgeTick } from '../tick/build.js';",
          "import type { TickRecord } from '../tick/tick-record.js';",
          "import { runTick } from '../tick/run-tick.js';",
          "import { runLoop } from '../tick/loop.js';",
          "import { loadSetup } from '../session/index.js';",
        ].join('\n'),
      );
      expect(found.map((v) => [v.imports, v.rule])).toEqual([
        ['../tick/build.js', "outside tick/ only the tick's entries: run-tick.ts, loop.ts, limit-waits.ts"],
        [
          '../tick/tick-record.js',
          "outside tick/ only the tick's entries: run-tick.ts, loop.ts, limit-waits.ts",
        ],
      ]);
    });

    it('a base flow (tick, cycle, planner) reaching another flow at all', () => {
      const found = planted(
        'source/engine/planner/planted.ts',
        [
          "import { readPrd } from '../workflow/prd-reader.js';",
          "import { runCycle } from '../cycle/run-cycle.js';",
          "import { acquireLock } from '../session/index.js';",
          "import { Git } from '../judge/git.js';",
        ].join('\n'),
      );
      expect(found.map((v) => [v.imports, v.rule])).toEqual([
        [
          '../workflow/prd-reader.js',
          'planner/ does not reach into workflow/: shared pieces belong in session/',
        ],
        ['../cycle/run-cycle.js', 'planner/ does not reach into cycle/: shared pieces belong in session/'],
      ]);
    });

    it('the fleet and status reach only the files listed for them; session/ and the layers below reach no flow', () => {
      expect(
        planted('source/engine/fleet/planted.ts', "import { prepare } from '../workflow/prepare.js';\n").map(
          (v) => v.imports,
        ),
      ).toEqual(['../workflow/prepare.js']);
      expect(
        planted(
          'source/engine/status/planted.ts',
          "import { readWorkflow } from '../workflow/workflow-store.js';\nimport { x } from '../workflow/context.js';\n",
        ).map((v) => v.imports),
      ).toEqual(['../workflow/context.js']);
      for (const path of ['source/engine/session/planted.ts', 'source/engine/judge/planted.ts'])
        expect(planted(path, "import { runTick } from '../tick/run-tick.js';\n").map((v) => v.rule)).toEqual([
          'session/ and the layers below it import no flow (flows stand on them, not the reverse)',
        ]);
    });

    it('a flow taking the lock or the config from workspace/ instead of session/', () => {
      const found = planted(
        'source/engine/cycle/brainstorm/planted.ts',
        [
          "import { acquireLock } from '../../workspace/lock.js';",
          "import { loadConfig } from '../../workspace/load-config.js';",
          "import { workspacePaths } from '../../workspace/paths.js';",
        ].join('\n'),
      );
      expect(found.map((v) => v.imports)).toEqual([
        '../../workspace/lock.js',
        '../../workspace/load-config.js',
      ]);
    });

    it("a child process started outside the process port and the git port (fleet/phase-step.ts's old gh call)", () => {
      const found = planted(
        'source/engine/fleet/planted.ts',
        [
          "import { execFile } from 'node:child_process';",
          "import { spawn } from 'child_process';",
          "const { execa } = await import('execa');",
          "import { runProcess } from '../supervise/run-process.js';",
        ].join('\n'),
      );
      expect(found.map((v) => v.imports)).toEqual(['node:child_process', 'child_process', 'execa']);
      expect(found[0]?.rule).toBe(
        'child processes start only in the process port (supervise/run-process.ts) or the git port (judge/git.ts)',
      );
    });

    it('the demo and the schema tool use only the engine files listed for them', () => {
      const found = planted(
        'source/demo/planted.ts',
        [
          "import { findExecutable } from '../engine/agents/find-executable.js';",
          "import { PACKAGE_ROOT } from '../engine/workspace/package-assets.js';",
          "import { startScriptedModel } from './scripted-model-server.js';",
          "import { runTick } from '../engine/tick/run-tick.js';",
          "import { theme } from '../ui/theme.js';",
        ].join('\n'),
      );
      expect(found.map((v) => v.imports)).toEqual(['../engine/tick/run-tick.js', '../ui/theme.js']);
      expect(
        planted('source/tools/planted.ts', "import { loadSetup } from '../engine/session/index.js';\n").map(
          (v) => v.imports,
        ),
      ).toEqual(['../engine/session/index.js']);
    });

    it('an import inside a comment is not an import', () => {
      expect(planted('source/ui/planted.ts', "// import { x } from '../engine/tick/run-tick.js';\n")).toEqual(
        [],
      );
    });
  });
});
