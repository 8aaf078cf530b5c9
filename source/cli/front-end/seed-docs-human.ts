import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { MapResult, SeedDocs, SeedDocsHuman } from '../../engine/index.js';
import { type CommandIo, println } from '../io.js';
import { askBrainstorm, askYesNo, openTerminal, type Terminal } from './brainstorm-terminal.js';

/**
 * The human's side of `relais cycle init` (the engine's `SeedDocsHuman` port): the map and the
 * documents are printed; the answers come from the terminal (or an answers file the engine read);
 * the documents are written only after a `y` at the terminal or `--confirm`.
 */
export function seedDocsHuman(
  io: CommandIo,
  how: { readonly interactive: boolean; readonly confirmFlag: boolean; readonly answersFile: boolean },
): SeedDocsHuman & { close(): void } {
  let terminal: Terminal | null = null;
  const open = (signal: AbortSignal): Terminal => {
    terminal ??= openTerminal(io, signal);
    return terminal;
  };
  return {
    mapped: (map, docsDir) => printMap(io, map, docsDir),
    brainstorm: async (signal) => (how.interactive ? askBrainstorm(open(signal), io) : null),
    async confirm(docs, { root, docsDir }, signal) {
      printDocs(io, docs, root, docsDir);
      const confirmed =
        how.confirmFlag ||
        (how.interactive && (await askYesNo(open(signal), `Write these documents in ${docsDir}/?`)));
      if (!confirmed)
        println(
          io.stdout,
          how.answersFile && !how.interactive
            ? 'Nothing written: review the documents above, then run again with --confirm.'
            : 'Nothing written.',
        );
      return confirmed;
    },
    close: () => terminal?.close(),
  };
}

function printMap(io: CommandIo, map: MapResult, docsDir: string): void {
  println(io.stdout, `Codebase: ${map.detection.kind} (${map.detection.why})`);
  if (map.degraded) println(io.stdout, `Mapping failed, continuing as greenfield: ${map.degraded}`);
  const files = Object.keys(map.docs);
  if (files.length > 0) {
    const how =
      map.agentCalls > 0 ? `written by the mapper (${map.agentCalls} call(s))` : 'kept from the last mapping';
    println(
      io.stdout,
      `Living docs: ${files.length} files in ${docsDir}/p12/, ${map.tokens} tokens, ${how}${map.trimmed ? ', trimmed to the cap' : ''}`,
    );
    // Seed 003 P12: the living docs feed the brainstorm. The human reads them whole before answering.
    println(io.stdout, 'Read them before you answer: they say what the code is today.');
    for (const [path, text] of Object.entries(map.docs)) {
      println(io.stdout, `\n----- ${path} -----`);
      io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
    }
    println(io.stdout, '----- end of the living docs -----');
  } else println(io.stdout, 'Living docs: none (greenfield brainstorm)');
}

function printDocs(io: CommandIo, docs: SeedDocs, root: string, docsDir: string): void {
  for (const [name, text] of Object.entries(docs)) {
    // A returning project's documents are replaced as a whole: say so before the human confirms.
    const replaces = existsSync(join(root, docsDir, name)) ? ' (replaces the current file)' : '';
    println(io.stdout, `\n----- ${docsDir}/${name}${replaces} -----`);
    io.stdout.write(text);
  }
  println(io.stdout, `----- end (plus ${docsDir}/P2_DONE and the cycle state) -----\n`);
}
