/**
 * The command line as shipped: the esbuild bundle `npm run build` writes to dist/bundle/ and
 * `npm start` runs (scripts/bundle-cli.mjs). Bundled here from the current sources into a
 * folder as deep below the root as dist/bundle/, it serves the card with the package's
 * version and the web page beside it, loads its first-use chunks (PostgreSQL-free SQLite
 * store, the conformance kit with its spec files), and answers --version.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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

  it('--version prints the package version', () => {
    const result = spawnSync(process.execPath, [cli, '--version'], { encoding: 'utf8' });
    assert.equal(result.stdout.trim(), VERSION);
  });
});
