/**
 * nginx as a reverse proxy in front of harness instances, run as the test's child: its prefix,
 * config, pid file, logs and temp folders in a temp folder of its own, one process
 * (`master_process off`), stopped and the folder removed by `close`. Nothing of it outlives the
 * test, and it writes nothing outside that folder.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { program } from '../needs.js';
import { spawnGroup } from './processes.js';
import { poll, within } from './wait.js';

export const NGINX = program('nginx', 'apt-get install -y nginx');

/** One address nginx listens on: it sends each request to `primary`, and to `backup` when the primary fails it. */
export interface ProxiedPair {
  /** host:port of the instance tried first, every time (no `max_fails`: a 503 does not take it out). */
  primary: string;
  /** host:port tried when the primary refuses the connection or answers 503. */
  backup: string;
}

export interface RunningNginx {
  /** The base URL of each pair, in order. */
  urls: string[];
  /** The upstream statuses nginx logged, one line per request: e.g. "503, 200" for a request retried on the backup. */
  upstreamStatuses(): string[];
  close(): Promise<void>;
}

/** A free port on 127.0.0.1 now (nginx cannot be told to choose one). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function config(dir: string, pairs: readonly ProxiedPair[], ports: readonly number[]): string {
  const blocks = pairs.map(
    (pair, index) => `
  upstream pair${index} {
    server ${pair.primary} max_fails=0;
    server ${pair.backup} backup;
  }
  server {
    listen 127.0.0.1:${ports[index]};
    location = /nginx-ready {
      access_log off;
      return 204;
    }
    location / {
      proxy_pass http://pair${index};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_buffering off;
      # A refusal to retry (503) goes to the next upstream; JSON-RPC is POST, hence non_idempotent.
      proxy_next_upstream error timeout http_503 non_idempotent;
    }
  }`,
  );
  return `daemon off;
master_process off;
pid ${join(dir, 'nginx.pid')};
error_log ${join(dir, 'error.log')} warn;
events { worker_connections 64; }
http {
  log_format upstreams '$upstream_status';
  access_log ${join(dir, 'access.log')} upstreams;
  client_body_temp_path ${join(dir, 'client_body')};
  proxy_temp_path ${join(dir, 'proxy')};
  fastcgi_temp_path ${join(dir, 'fastcgi')};
  uwsgi_temp_path ${join(dir, 'uwsgi')};
  scgi_temp_path ${join(dir, 'scgi')};
${blocks.join('\n')}
}
`;
}

/** Starts nginx proxying each pair on a port of its own; resolves once every port answers. */
export async function startNginx(pairs: readonly ProxiedPair[]): Promise<RunningNginx> {
  const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-nginx-'));
  const ports: number[] = [];
  for (let i = 0; i < pairs.length; i++) ports.push(await freePort());
  const conf = join(dir, 'nginx.conf');
  writeFileSync(conf, config(dir, pairs, ports));
  // -e: the error log before the config is read, else the default path under /var/log.
  const child = spawnGroup(NGINX.path!, ['-p', `${dir}/`, '-c', conf, '-e', join(dir, 'error.log')], {
    env: process.env,
  });
  let output = '';
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stdout.resume();
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const log = (name: string) => {
    try {
      return readFileSync(join(dir, name), 'utf8');
    } catch {
      return '';
    }
  };
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await within('nginx stopping', exited);
    rmSync(dir, { recursive: true, force: true });
  };
  const urls = ports.map((port) => `http://127.0.0.1:${port}`);
  try {
    await poll('nginx listening', async () => {
      if (child.exitCode !== null) throw new Error(`nginx exited: ${output}${log('error.log')}`);
      const answers = await Promise.all(
        urls.map((url) =>
          fetch(`${url}/nginx-ready`).then(
            () => true,
            () => false,
          ),
        ),
      );
      return answers.every(Boolean);
    });
  } catch (error) {
    await close();
    throw error;
  }
  return {
    urls,
    upstreamStatuses: () => log('access.log').split('\n').filter(Boolean),
    close,
  };
}
