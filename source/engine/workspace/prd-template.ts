/**
 * The PRD.md shape `ralphy start` reads (seed 002 §7; source/engine/session/prd.ts checks a
 * `# Title` and an `## Objective` section), so nobody has to discover it by failing.
 */

export const PRD_TEMPLATE_NAME = 'PRD.template.md';

export function prdTemplate(product: string): string {
  return `# ${product}

## Objective
One paragraph: what this change should achieve, for whom, and why now.

## Requirements
- The first thing that must be true when this is done.
- The second one. Each line should be checkable by a test or by reading the code.

## Constraints
- Languages, libraries, files or interfaces that must not change.

## Out of scope
- What this work will not do.

## Acceptance
- How a reviewer decides it is done (commands to run, behaviour to see).
`;
}
