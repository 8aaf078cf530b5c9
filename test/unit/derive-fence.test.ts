import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { checkTaskAgainstFence } from '../../source/engine/judge/config-fence.js';
import { deriveFence, productNameOf } from '../../source/engine/workspace/derive-fence.js';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function repo(files: Record<string, string>): string[] {
  dir = mkdtempSync(join(tmpdir(), 'relais-fence-'));
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(dir, path, '..'), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return Object.keys(files);
}

describe('init derives the fence from the repository (issue 21 item 4)', () => {
  it('a flat package: its top-level source, test and doc files, never its manifest, lockfile or CI', () => {
    const tracked = repo({
      'package.json': JSON.stringify({ name: 'flat-pkg', main: 'index.js' }),
      'index.js': '',
      'index.d.ts': '',
      'test.js': '',
      'readme.md': '',
      license: '',
      '.github/workflows/main.yml': '',
      '.editorconfig': '',
      'tsconfig.json': '{}',
    });
    expect(deriveFence(dir, tracked).globs).toEqual(['index.d.ts', 'index.js', 'readme.md', 'test.js']);
    expect(productNameOf(dir)).toBe('flat-pkg');
  });

  it('src/ + test/: folders become folder/**; files inside them are not listed again', () => {
    const tracked = repo({
      'package.json': JSON.stringify({
        name: 'x',
        main: './src/index.js',
        files: ['src', 'types/index.d.ts'],
      }),
      'src/index.js': '',
      'src/util/a.ts': '',
      'test/a.test.js': '',
      'types/index.d.ts': '',
      'dist/index.js': '',
      'README.md': '',
    });
    expect(deriveFence(dir, tracked).globs).toEqual(['README.md', 'src/**', 'test/**', 'types/**']);
  });

  it('a monorepo: package.json workspaces, with a folder that has no tracked file yet', () => {
    const tracked = repo({
      'package.json': JSON.stringify({ name: 'mono', workspaces: ['packages/*', 'tools/'] }),
      'packages/a/index.js': '',
      'packages/b/package.json': '{}',
      'pnpm-lock.yaml': '',
    });
    const fence = deriveFence(dir, tracked);
    expect(fence.globs).toEqual(['packages/**', 'tools/**']);
    expect(fence.reasons['tools/**']).toBe('package.json workspaces');
  });

  it('no package.json: the folder name is the product name; an empty repository derives nothing', () => {
    repo({});
    expect(deriveFence(dir, []).globs).toEqual([]);
    expect(productNameOf(dir)).toMatch(/^relais-fence-/);
  });
});

describe('a task against the config fence', () => {
  const tracked = ['index.js', 'src/a.ts', 'readme.md'];
  it('a task naming only paths the config excludes is refused; the effective fence is shown', () => {
    const check = checkTaskAgainstFence(['index.js'], ['src/**'], tracked);
    expect(check.excluded).toEqual(['index.js']);
    expect(check.effective).toBe('task [index.js] ∩ config [src/**]');
  });
  it('overlapping globs, and globs that match nothing yet, pass to the judge', () => {
    expect(checkTaskAgainstFence(['**'], ['src/**'], tracked).excluded).toEqual([]);
    expect(checkTaskAgainstFence(['src/**', 'newdir/**'], ['src/**'], tracked).excluded).toEqual([]);
    expect(checkTaskAgainstFence(['lib/new.ts'], ['src/**'], tracked).excluded).toEqual(['lib/new.ts']);
  });
  it('a path that is no glob but matches other paths (./src/a.ts, an escape, a negation) is matched as before', () => {
    // micromatch's matcher of these takes tracked paths other than the string itself.
    expect(checkTaskAgainstFence(['./src/a.ts'], ['src/**'], tracked).excluded).toEqual([]);
    expect(checkTaskAgainstFence(['src/\\a.ts'], ['src/**'], tracked).excluded).toEqual([]);
    expect(checkTaskAgainstFence(['!readme.md'], ['src/**'], tracked).excluded).toEqual([]);
    expect(checkTaskAgainstFence(['./index.js'], ['src/**'], tracked).excluded).toEqual(['./index.js']);
  });
  it('a glob whose tracked files all lie outside is refused; one inside among them is enough', () => {
    expect(checkTaskAgainstFence(['*.js', 'src/*'], ['src/**'], tracked).excluded).toEqual(['*.js']);
    expect(checkTaskAgainstFence(['**/*.{js,ts}'], ['src/**'], tracked).excluded).toEqual([]);
  });
  it('reads the tracked paths only until every glob is decided (the index is decoded that far)', () => {
    let read = 0;
    function* paths(): Generator<string> {
      for (const path of ['a.md', 'src/a.ts', 'src/b.ts', 'z.md']) {
        read++;
        yield path;
      }
      throw new Error('read past the end');
    }
    expect(checkTaskAgainstFence(['src/**', 'src/a.ts'], ['src/**'], paths()).excluded).toEqual([]);
    expect(read).toBe(2);
    // A glob nothing tracked matches yet is decided only by reading every path.
    expect(() => checkTaskAgainstFence(['src/**', 'new/**'], ['src/**'], paths())).toThrow(
      'read past the end',
    );
  });
});
