import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

// The CLI picks its front end from the environment; tests always get the plain reporter, and
// git commands inside tests never read the developer's global config.
process.env.GIT_CONFIG_NOSYSTEM = '1';
process.env.GIT_AUTHOR_NAME = 'Relais Test';
process.env.GIT_AUTHOR_EMAIL = 'test@relais.invalid';
process.env.GIT_COMMITTER_NAME = 'Relais Test';
process.env.GIT_COMMITTER_EMAIL = 'test@relais.invalid';
// User-level settings (`relais config`, through conf) go to a folder of this test file, never the
// developer's own config folder; a CLI spawned by a test inherits it.
const userSettings = mkdtempSync(join(tmpdir(), 'relais-user-settings-'));
process.env.RELAIS_CONFIG_DIR = userSettings;
// Gone with its test file (about 230 a suite run were left in the temp folder before).
afterAll(() => rmSync(userSettings, { recursive: true, force: true }));
