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

    it('an import inside a comment is not an import', () => {
      expect(planted('source/ui/planted.ts', "// import { x } from '../engine/tick/run-tick.js';\n")).toEqual(
        [],
      );
    });
  });
});
