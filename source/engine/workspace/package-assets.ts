import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * Files shipped with the package (default prompts, default config, the demo repository), found
 * from this module's own place: the nearest folder above it that holds Relais's package.json.
 * This module sits at different depths in source/, in tsc's dist/ and in the bundled CLI's chunks.
 */
export const PACKAGE_ROOT = findPackageRoot(dirname(fileURLToPath(import.meta.url)));

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (
      existsSync(manifest) &&
      (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'relais'
    )
      return `${dir}/`;
    if (dirname(dir) === dir) throw new Error(`relais: no package.json of relais above ${from}`);
  }
}

export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(join(PACKAGE_ROOT, 'package.json'), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}
