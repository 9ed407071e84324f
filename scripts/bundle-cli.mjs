// Bundles the command line into dist/bundle/cli.mjs with esbuild: one file instead of the
// hundreds of modules the packages are made of, which is most of start-up's time (bench/startup.ts).
// Left outside the bundle: native or platform-bound packages (better-sqlite3, pg), gRPC and the
// SDK's gRPC parts (loaded only when gRPC is asked for), and pino-pretty (loaded by name for a
// terminal). The bundle sits two folders below the package root, as dist/src/cli.js does, so
// the files it finds relative to itself (package.json, dist/web, spec/) are where they are for
// the unbundled build. Run by `npm run build`; `node scripts/bundle-cli.mjs` alone works too.
import { build } from 'esbuild';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
// --outdir: elsewhere (bench/startup.ts bundles the current sources), still two folders below the root.
const { values } = parseArgs({ options: { outdir: { type: 'string' } } });
const outdir = values.outdir ?? join(root, 'dist', 'bundle');
const started = Date.now();
try {
  const result = await build({
    absWorkingDir: root,
    entryPoints: [join(root, 'src', 'cli.ts')],
    outdir,
    entryNames: '[name]',
    outExtension: { '.js': '.mjs' },
    bundle: true,
    // What is imported on first use (gRPC, PostgreSQL, MCP, the model providers, YAML, chokidar, chat and send)
    // goes to chunks of its own, read only then: start-up parses only what serving needs.
    splitting: true,
    format: 'esm',
    platform: 'node',
    // Class names are data here: an A2A error's name is its metrics label and its wire name.
    keepNames: true,
    target: 'node20',
    sourcemap: 'linked',
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
    external: [
      'better-sqlite3',
      'pg',
      'pg-native',
      '@grpc/grpc-js',
      '@a2a-js/sdk/server/grpc',
      '@a2a-js/sdk/client/grpc',
      'pino-pretty',
    ],
    // CommonJS packages inside an ES module bundle still call require().
    banner: {
      js: "import { createRequire as __tinyHarnessRequire } from 'node:module'; const require = __tinyHarnessRequire(import.meta.url);",
    },
  });
  const outputs = Object.entries(result.metafile.outputs).filter(([file]) => file.endsWith('.mjs'));
  const entry = outputs.find(([file]) => file.endsWith('/cli.mjs'))?.[1].bytes ?? 0;
  const all = outputs.reduce((sum, [, output]) => sum + output.bytes, 0);
  console.log(
    `command line bundled in ${Date.now() - started} ms: ${relative(root, join(outdir, 'cli.mjs'))} ${(entry / 1024 / 1024).toFixed(1)} MiB, ${outputs.length - 1} chunks loaded on first use ${((all - entry) / 1024 / 1024).toFixed(1)} MiB`,
  );
} catch (error) {
  console.error(`scripts/bundle-cli.mjs: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
