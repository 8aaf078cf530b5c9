import { describe, expect, it } from 'vitest';
import { generateJsonSchema } from '../../source/engine/protocol/json-schemas.js';
import { promptSchemaText } from '../../source/engine/tick/prompt-schemas.js';

// Issue 17: the prompts read the committed JSON Schemas instead of generating them each tick.
describe('the schemas the tick prompts carry', () => {
  it('are exactly the generated schemas, on one line', () => {
    for (const name of ['task.schema.json', 'builder_result.schema.json'] as const) {
      const text = promptSchemaText(name);
      expect(text).toBe(JSON.stringify(generateJsonSchema(name)));
      expect(text).not.toContain('\n');
    }
  });
});
