import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { configSchema, type RelaisConfig } from '../protocol/config.js';
import { PACKAGE_ROOT } from './package-assets.js';

/**
 * The default relais.config.json: every default of the schema written out (so the file documents
 * itself), plus verification templates for the scripts the project really has.
 */

type Template = RelaisConfig['verification']['templates'][number];

export function defaultConfig(schemaRef: string, templates: Template[]): Record<string, unknown> {
  const defaults = configSchema.parse({ verification: { templates } });
  return { $schema: schemaRef, ...defaults };
}

/** `lint`, `typecheck` and `test` scripts of package.json, run by the project's package manager. */
export function detectTemplates(root: string): Template[] {
  let scripts: Record<string, unknown> = {};
  try {
    const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts?: Record<string, unknown>;
    };
    scripts = manifest.scripts ?? {};
  } catch {
    return [];
  }
  const manager = existsSync(join(root, 'pnpm-lock.yaml'))
    ? 'pnpm'
    : existsSync(join(root, 'yarn.lock'))
      ? 'yarn'
      : existsSync(join(root, 'bun.lockb'))
        ? 'bun'
        : 'npm';
  return ['lint', 'typecheck', 'test']
    .filter((name) => typeof scripts[name] === 'string')
    .map((name) => ({ id: name, cmd: manager, args: ['run', name], params: {} }));
}

export function renderConfig(config: Record<string, unknown>): string {
  return `${JSON.stringify(config, null, 2)}\n`;
}

/** The package's own relais.config.json (docs/ARCHITECTURE.md: the default config, pointing at ./schemas). */
export function renderPackageDefaultConfig(): string {
  return renderConfig(defaultConfig('./schemas/config.schema.json', detectTemplates(PACKAGE_ROOT)));
}

/**
 * Where a project's own checks keep their caches, by what the repository holds: a check in the
 * sandbox writes only its task's paths plus these (`sandbox.verification_writable`), so `relais
 * init` names the usual ones rather than let the first `cargo test` or `vitest` fail on EROFS.
 */
export function detectCacheFolders(root: string): string[] {
  const has = (file: string) => existsSync(join(root, file));
  const folders: string[] = [];
  if (has('package.json')) folders.push('node_modules/.cache/**', 'node_modules/.vite/**');
  if (has('Cargo.toml')) folders.push('target/**');
  if (['pyproject.toml', 'setup.py', 'setup.cfg', 'requirements.txt'].some(has))
    folders.push('.pytest_cache/**', '.mypy_cache/**', '.ruff_cache/**');
  return folders;
}
