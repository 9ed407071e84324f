/**
 * The command line as shipped: the esbuild bundle `npm run build` writes to dist/bundle/ and
 * `npm start` runs (scripts/bundle-cli.mjs). Bundled here from the current sources into a
 * folder as deep below the root as dist/bundle/, it serves the card with the package's
 * version and the web page beside it, loads its first-use chunks (PostgreSQL-free SQLite
 * store, the conformance kit with its spec files), and answers --version. A plain start leaves
 * unread what it does not use.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureBundle, ROOT } from '../web/bundle.js';
import { startServerProcess, type ServerProcess } from './process.js';

const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

describe('the shipped command line (dist/bundle)', () => {
  const outdir = mkdtempSync(join(ROOT, 'test', '.tmp-shipped-'));
  const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-shipped-'));
  const cli = join(outdir, 'cli.mjs');
  let server: ServerProcess | undefined;

  before(async () => {
    ensureBundle();
    const bundled = spawnSync(process.execPath, [join(ROOT, 'scripts/bundle-cli.mjs'), '--outdir', outdir], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    assert.equal(bundled.status, 0, bundled.stdout + bundled.stderr);
    server = await startServerProcess(['--data-dir', dataDir], {}, [cli]);
  });

  after(async () => {
    await server?.stop();
    rmSync(outdir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('serves the card with the package version, and the web page', async () => {
    const card = (await (await fetch(`${server!.url}/.well-known/agent-card.json`)).json()) as { version: string };
    assert.equal(card.version, VERSION);
    const page = await fetch(`${server!.url}/`);
    assert.equal(page.status, 200);
    assert.match(await page.text(), /<textarea\s+id="input"/);
  });

  it('answers a command over JSON-RPC and runs the conformance kit, its spec files found', () => {
    const result = spawnSync(process.execPath, [cli, 'conform', '--transport', 'jsonrpc', server!.url], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(result.status, 0, result.stdout + result.stderr);
    assert.match(result.stdout, /PASS {2}CMD-14 {2}the params are valid against commands-extension-v1\.schema\.json/);
  });

  it('a plain start serves its first card without loading what it does not use', async () => {
    // No MCP server, no command file, no OTEL_ variable, no gRPC port, SQLite: none of these is read.
    const loads = join(dataDir, 'loads.txt');
    const plain = await startServerProcess(['--data-dir', join(dataDir, 'plain')], { TINY_HARNESS_TEST_LOADS: loads }, [
      '--import',
      join(ROOT, 'test/fixtures/record-loads.mjs'),
      cli,
    ]);
    try {
      assert.equal((await fetch(`${plain.url}/.well-known/agent-card.json`)).status, 200);
      // The packages read so far: loaded from node_modules, or in a chunk (by its source map).
      const sources = new Set<string>();
      for (const url of readFileSync(loads, 'utf8').split('\n')) {
        if (!url.startsWith('file:')) continue;
        if (url.includes('/node_modules/')) sources.add(url.replace(/^.*node_modules\//, ''));
        const map = `${fileURLToPath(url)}.map`;
        if (url.endsWith('.mjs') && existsSync(map))
          for (const source of (JSON.parse(readFileSync(map, 'utf8')) as { sources: string[] }).sources)
            sources.add(source.replace(/^.*node_modules\//, ''));
      }
      const loaded = (pkg: string) => [...sources].some((source) => source.startsWith(`${pkg}/`));
      assert.ok(loaded('kysely') && loaded('@a2a-js/sdk'), 'the loads of the first card are seen');
      const unused = [
        // The HTTP bindings are the project's own, on node:http (issue 36).
        'express',
        '@modelcontextprotocol/sdk',
        'yaml',
        'ajv',
        '@opentelemetry/sdk-node',
        '@grpc/grpc-js',
        'pg',
        'ai',
      ];
      assert.deepEqual(unused.filter(loaded), []);
    } finally {
      await plain.stop();
    }
  });

  it('--version prints the package version', () => {
    const result = spawnSync(process.execPath, [cli, '--version'], { encoding: 'utf8' });
    assert.equal(result.stdout.trim(), VERSION);
  });
});
