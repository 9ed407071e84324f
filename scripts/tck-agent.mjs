// `npm run tck:agent`: serves examples/tck-agent.mjs, the agent the official A2A TCK grades, on the
// harness on JSON-RPC, HTTP+JSON and gRPC, storing in SQLite in a fresh folder of the OS's temporary
// directory, with push to loopback allowed (examples/tck-agent.json). docs/conformance.md says how
// to run the TCK against it. TCK_PORT and TCK_GRPC_PORT choose the ports (9999 and 10000).
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const port = process.env.TCK_PORT || '9999';
const grpcPort = process.env.TCK_GRPC_PORT || String(Number(port) + 1);
// A fresh folder each run: the TCK gives one message id to each name for a whole run.
const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-tck-'));

const built = spawnSync(process.execPath, [join(root, 'scripts/build-if-stale.mjs')], { cwd: root, stdio: 'inherit' });
if (built.status !== 0) process.exit(built.status ?? 1);

process.stdout.write(
  `TCK agent: tasks stored in SQLite in ${dataDir}\n` +
    `run the TCK (docs/conformance.md): ./run_tck.py --sut-host http://127.0.0.1:${port}\n`,
);
const server = spawn(
  process.execPath,
  [
    join(root, 'dist/bundle/cli.mjs'),
    'serve',
    '--agent',
    join(root, 'examples/tck-agent.mjs'),
    '--config',
    join(root, 'examples/tck-agent.json'),
    '--data-dir',
    dataDir,
    '--port',
    port,
    '--grpc-port',
    grpcPort,
  ],
  { cwd: root, stdio: 'inherit' },
);
// The server drains on a signal: pass it on, and end as it ends.
for (const signal of ['SIGINT', 'SIGTERM']) process.on(signal, () => server.kill(signal));
server.on('exit', (code, signal) => process.exit(code ?? (signal ? 1 : 0)));
