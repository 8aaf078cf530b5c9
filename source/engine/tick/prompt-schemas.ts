import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateJsonSchema, type SchemaFileName } from '../protocol/json-schemas.js';
import { PACKAGE_ROOT } from '../workspace/package-assets.js';

const texts = new Map<SchemaFileName, string>();

/**
 * A JSON Schema as the prompts carry it (one line), read from the package's `schemas/` file
 * rather than generated from zod on every tick (issue 17: about 6 ms of CPU per schema and tick).
 * The committed file is the generated one: `test/unit/schema-files.test.ts` fails when they
 * differ, and `test/unit/prompt-schemas.test.ts` checks this text against the generator. A file
 * that is missing or unreadable falls back to generating.
 */
export function promptSchemaText(name: SchemaFileName): string {
  let text = texts.get(name);
  if (text === undefined) {
    try {
      text = JSON.stringify(JSON.parse(readFileSync(join(PACKAGE_ROOT, 'schemas', name), 'utf8')));
    } catch {
      text = JSON.stringify(generateJsonSchema(name));
    }
    texts.set(name, text);
  }
  return text;
}
