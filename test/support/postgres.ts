import { spawnSync } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * A real PostgreSQL for one test file: initdb into a temp dir, started with pg_ctl on a free
 * loopback port, one database created. As root, initdb refuses to run, so the server runs as the
 * `postgres` user (`runuser`); otherwise as the current user. `stop()` removes everything.
 */

export interface TestPostgres {
  readonly url: string;
  readonly port: number;
  /** A URL for another database on the same server, created on demand. */
  database(name: string): string;
  stop(): void;
}

const BIN_DIRS = ['/usr/lib/postgresql/17/bin', '/usr/lib/postgresql/16/bin', '/usr/lib/postgresql/15/bin'];

function pgBin(name: string): string {
  for (const dir of BIN_DIRS) if (existsSync(join(dir, name))) return join(dir, name);
  return name;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

export async function startPostgres(): Promise<TestPostgres> {
  const asRoot = process.getuid?.() === 0;
  const dir = mkdtempSync(join(tmpdir(), 'relais-pg-'));
  const data = join(dir, 'data');
  if (asRoot) {
    const id = spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' });
    const gid = spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' });
    chownSync(dir, Number(id.stdout.trim()), Number(gid.stdout.trim()));
  }
  const run = (argv: string[]) => {
    const [cmd, ...args] = asRoot ? ['runuser', '-u', 'postgres', '--', ...argv] : argv;
    const r = spawnSync(cmd as string, args, { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`${argv.join(' ')} failed: ${r.stderr || r.stdout}`);
  };
  run([pgBin('initdb'), '-D', data, '-U', 'postgres', '--auth=trust', '--no-sync', '-E', 'UTF8']);
  const port = await freePort();
  const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=200`;
  run([pgBin('pg_ctl'), '-D', data, '-w', '-l', join(dir, 'log'), '-o', options, 'start']);
  const created = new Set<string>();
  const database = (name: string) => {
    if (!created.has(name)) {
      run([pgBin('createdb'), '-h', '127.0.0.1', '-p', String(port), '-U', 'postgres', name]);
      created.add(name);
    }
    return `postgresql://postgres@127.0.0.1:${port}/${name}`;
  };
  return {
    url: database('relais'),
    port,
    database,
    stop() {
      spawnSync(asRoot ? 'runuser' : pgBin('pg_ctl'), [
        ...(asRoot ? ['-u', 'postgres', '--', pgBin('pg_ctl')] : []),
        '-D',
        data,
        '-m',
        'immediate',
        'stop',
      ]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
