import { describe, expect, it } from 'vitest';
import { builderResultSchema } from '../../source/engine/protocol/builder-result.js';
import { parseModelJson } from '../../source/engine/protocol/model-json.js';

const ok = { summary: 's', files_intended: [], commands_ran: [], notes: [] };

describe('parseModelJson', () => {
  it('accepts one bare object, or one fenced around the whole answer', () => {
    expect(parseModelJson(JSON.stringify(ok), builderResultSchema)).toEqual({ ok: true, value: ok });
    expect(parseModelJson(`\`\`\`json\n${JSON.stringify(ok)}\n\`\`\``, builderResultSchema)).toEqual({
      ok: true,
      value: ok,
    });
  });

  it.each([
    ['', 'empty'],
    ['Done! I changed the file.', 'not a JSON object'],
    [`Here you go: ${JSON.stringify(ok)}`, 'not a JSON object'],
    [`${JSON.stringify(ok)}\n${JSON.stringify(ok)}`, 'not a JSON object'],
    ['[1, 2]', 'must be one JSON object'],
    [JSON.stringify({ ...ok, summary: '' }), 'summary:'],
    [JSON.stringify({ ...ok, extra: 1 }), 'Unrecognized key'],
  ])('rejects %j with a reason', (text, reason) => {
    const parsed = parseModelJson(text, builderResultSchema);
    expect(parsed.ok).toBe(false);
    expect(parsed.ok ? '' : parsed.reason).toContain(reason);
  });
});
