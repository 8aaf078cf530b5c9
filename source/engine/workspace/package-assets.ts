import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * Files shipped with the package (default prompts, default config, the demo repository). This
 * module sits three folders below the package root both in source/ and in dist/.
 */
export const PACKAGE_ROOT = fileURLToPath(new URL('../../../', import.meta.url));

export function packageVersion(): string {
  const manifest = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}
