#!/usr/bin/env node
// A scripted stand-in for the `claude` CLI playing the codebase mapper of `relais cycle init`
// (seed 003 P12): no model, it lays out the seven living docs from the FACTS block the runner put
// in its prompt, and answers in Claude Code's `json` wrapper. Used to show (and measure) what the
// mapper pipeline produces on a real repository without a model: detection, facts, the cap, the
// loading map and the writes are the real ones; only the prose is mechanical.
import { readFileSync } from 'node:fs';

if (process.argv.includes('--version')) {
  process.stdout.write('9.9.9 (scripted mapper)\n');
  process.exit(0);
}
const prompt = readFileSync(0, 'utf8');
const facts = /--- FACTS \(from the runner\) ---\n([\s\S]*?)\n--- END FACTS ---/.exec(prompt)?.[1] ?? '';
const sections = new Map();
for (const part of facts.split(/\n(?=## )/)) {
  const [head, ...body] = part.split('\n');
  sections.set(head.replace(/^## /, '').trim(), body.join('\n').trim());
}
const get = (name) => sections.get(name) ?? '';
const pick = (prefix) => [...sections].find(([k]) => k.startsWith(prefix))?.[1] ?? '';
const folders = get('Top folders')
  .split('\n')
  .map((l) => /^- (\S+\/): \d+/.exec(l)?.[1])
  .filter(Boolean);
const manifest = get('package.json');
const scripts = manifest
  .split('\n')
  .filter((l) => /^ {2}- /.test(l))
  .map((l) => l.trim());
const docs = {
  'TECH_STACK.md': [
    '# Tech stack',
    '',
    manifest || '(no package.json)',
    '',
    '## Files by extension',
    get('Extensions'),
  ].join('\n'),
  'PATTERNS.md': ['# Patterns', '', '## Layout (top folders by tracked files)', get('Top folders')].join(
    '\n',
  ),
  'PITFALLS.md': [
    '# Pitfalls',
    '',
    '- Run the tests before committing:',
    ...scripts.filter((s) => /test|lint|check/.test(s)),
  ].join('\n'),
  'RISKS.md': ['# Risks', '', get('Test files').split('\n')[0] || 'unknown test coverage'].join('\n'),
  'WORKFLOW.md': [
    '# Workflow',
    '',
    '## Scripts',
    ...(scripts.length ? scripts : ['(none)']),
    '',
    '## CI',
    get('CI') || '(none)',
    '',
    '## Recent commits',
    get('Recent commits').split('\n').slice(0, 5).join('\n'),
  ].join('\n'),
  'PRODUCT.md': ['# Product', '', pick('README').split('\n').slice(0, 25).join('\n') || 'unknown'].join('\n'),
  'GLOSSARY.md': [
    '# Glossary',
    '',
    ...folders.map((f) => `- ${f.replace(/\/$/, '')}: a top folder of the repository`),
  ].join('\n'),
};
// By track type first (seed 003 P12), then the finer rows by top folder.
const loading_map = [
  { track: 'feature', docs: ['PRODUCT.md', 'PATTERNS.md', 'GLOSSARY.md'] },
  { track: 'bugfix', docs: ['PITFALLS.md', 'RISKS.md'] },
  { track: 'refactor', docs: ['PATTERNS.md', 'RISKS.md'] },
  { track: '*', docs: ['TECH_STACK.md', 'WORKFLOW.md'] },
  ...folders.slice(0, 10).map((f) => ({
    area: f
      .replace(/\/$/, '')
      .toLowerCase()
      .replace(/[^a-z0-9_-]/g, '-')
      .replace(/^[^a-z0-9]+/, 'x')
      .slice(0, 40),
    paths: [f],
    docs: ['PATTERNS.md', 'PITFALLS.md'],
  })),
];
process.stdout.write(
  `${JSON.stringify({
    type: 'result',
    subtype: 'success',
    is_error: false,
    result: JSON.stringify({ docs, loading_map }),
    total_cost_usd: 0,
    num_turns: 1,
    permission_denials: [],
  })}\n`,
);
