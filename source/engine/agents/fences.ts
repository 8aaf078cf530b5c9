/**
 * Code fences in an agent's answer, as models write them: a status block inside one fence counts
 * (a template copied fence and all), an example inside a fence inside a fence does not (issue 15).
 */

/** How deep in code fences each line of an answer is (0: prose, 1: one fence, 2: a fence in a fence). */
export function fenceDepths(answer: string): Array<{ line: string; depth: number; fence: boolean }> {
  const open: Array<{ char: string; length: number }> = [];
  return answer.split('\n').map((line) => {
    const marker = /^\s*(`{3,}|~{3,})\s*(\S*)/.exec(line);
    if (!marker) return { line, depth: open.length, fence: false };
    const run = marker[1] as string;
    const top = open.at(-1);
    // A bare marker at least as long as the open one closes it; one with an info string, or a
    // shorter one, opens a fence inside (how models nest a markdown example in a fence).
    if (top && !marker[2] && run[0] === top.char && run.length >= top.length) open.pop();
    else open.push({ char: run[0] as string, length: run.length });
    return { line, depth: open.length, fence: true };
  });
}
