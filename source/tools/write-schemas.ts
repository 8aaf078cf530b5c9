import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderJsonSchemaFile, SCHEMA_FILE_NAMES } from '../engine/protocol/json-schemas.js';
import { renderPackageDefaultConfig } from '../engine/workspace/default-config.js';
import { PACKAGE_ROOT } from '../engine/workspace/package-assets.js';

/**
 * `npm run schemas`: regenerates schemas/*.schema.json and the default relais.config.json from the
 * zod schemas. test/unit/schema-files.test.ts fails when the committed files drift from these.
 */
for (const name of SCHEMA_FILE_NAMES) {
  writeFileSync(join(PACKAGE_ROOT, 'schemas', name), renderJsonSchemaFile(name));
  console.log(`wrote schemas/${name}`);
}
writeFileSync(join(PACKAGE_ROOT, 'relais.config.json'), renderPackageDefaultConfig());
console.log('wrote relais.config.json');
