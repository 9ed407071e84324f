/**
 * What would be published, installed as a user installs it (test/support/scratch-install.ts):
 * `npm pack` of each package and of the harness, then `npm install` of the tarballs, offline,
 * into two scratch projects. An embedder's (the two packages, @a2a-js/sdk and express): the
 * example mounts the packed extension on a bare `DefaultRequestHandler` with /help and /time, the
 * packed kit passes it, and the same server with two deliberate defects fails on exactly those
 * two rules. A harness user's (the harness, with the packages it depends on): `npx tiny-harness
 * serve` starts from the harness's `files` and its card answers, and the embedder's kit passes it
 * on JSON-RPC, HTTP+JSON and gRPC. Each project holds only what it declares: a package that
 * needs a dependency it does not declare (the kit's gRPC client and @bufbuild/protobuf) fails.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { needs } from '../needs.js';
import { failedRules, runKit, startServer, startServerScript, type ServerScript } from '../support/kit-run.js';
import { ROOT } from '../support/processes.js';
import { copySqliteAddon, installScratch, npmCache, npmEnv, pack } from '../support/scratch-install.js';

const KIT = 'node_modules/.bin/conform';
const scratch = mkdtempSync(join(tmpdir(), 'tiny-harness-pack-'));
const embedder = join(scratch, 'embedder');
const user = join(scratch, 'harness-user');
const missing = await installAll().catch((error: unknown) => {
  rmSync(scratch, { recursive: true, force: true });
  throw error;
});
if (missing) rmSync(scratch, { recursive: true, force: true });

/** Packs and installs both projects (at once: most of it is waiting on npm); what npm's cache lacked, if anything. */
async function installAll(): Promise<string> {
  const packed = await pack(['packages/commands-extension', 'packages/conform', ''], scratch);
  for (const dir of [embedder, user]) mkdirSync(dir);
  const harness = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
    devDependencies: Record<string, string>;
  };
  // The embedder's own choices (express for the example) are the harness's dev dependencies.
  const registry = (name: string) => ({ [name]: (harness.dependencies[name] ?? harness.devDependencies[name])! });
  const lacked = await Promise.all([
    installScratch(
      embedder,
      packed.filter((p) => p.folder !== ''),
      { ...registry('@a2a-js/sdk'), ...registry('express') },
    ),
    installScratch(user, packed, {}),
  ]);
  if (lacked.every((l) => l === '')) copySqliteAddon(user);
  return lacked.filter(Boolean).join(', ');
}

describe('the packages as published', needs(npmCache(missing)), () => {
  before(() => {
    const example = readFileSync(join(ROOT, 'examples', 'commands-on-sdk.mjs'), 'utf8');
    writeFileSync(join(embedder, 'agent.mjs'), example);
    const mount = 'const handler = mountCommandsOnSdk({ card, executor, registry });';
    assert.ok(example.includes(mount), 'the example mounts the extension in one line');
    writeFileSync(
      join(embedder, 'defective.mjs'),
      example.replace(
        mount,
        [
          // Defect 1: claims that never remember a message id, so a resend runs again (CMD-13).
          "const claims = { claim: async () => ({ kind: 'first', accept: async () => {}, release: async () => {}, finish: () => {} }) };",
          'const handler = mountCommandsOnSdk({ card, executor, registry, claims });',
          // Defect 2: the extension is never echoed in the A2A-Extensions header (CMD-17).
          'handler.onCall = () => {};',
        ].join('\n'),
      ),
    );
  });
  after(() => rmSync(scratch, { recursive: true, force: true }));

  it('each package ships its README, CHANGELOG, types and specification files', () => {
    for (const name of ['commands-extension', 'conform']) {
      const target = join(embedder, 'node_modules', '@tiny-harness', name);
      for (const file of ['README.md', 'CHANGELOG.md', 'dist/index.d.ts', 'spec/commands-extension-v1.md'])
        assert.ok(existsSync(join(target, file)), `@tiny-harness/${name} ships ${file}`);
    }
  });

  it('the packed extension on a bare DefaultRequestHandler: every rule the packed kit checks passes', async () => {
    const server = await startServerScript('agent.mjs', embedder);
    try {
      const { code, report } = await runKit(KIT, server.url, embedder);
      assert.deepEqual(failedRules(report), []);
      assert.equal(code, 0);
      assert.deepEqual(report.transports, ['JSONRPC', 'HTTP+JSON']);
      assert.ok(report.summary.pass > 20, `${report.summary.pass} checks passed`);
    } finally {
      await server.stop();
    }
  });

  it('the same server with two deliberate defects fails on exactly those rules (CMD-13, CMD-17)', async () => {
    const server = await startServerScript('defective.mjs', embedder);
    try {
      const { code, report } = await runKit(KIT, server.url, embedder);
      assert.deepEqual(failedRules(report), ['CMD-13', 'CMD-17']);
      assert.equal(code, 1);
    } finally {
      await server.stop();
    }
  });

  describe('npx tiny-harness serve, installed from its tarball', () => {
    let server: ServerScript | undefined;
    before(async () => {
      const data = join(user, 'data');
      const serve = ['tiny-harness', 'serve', '--host', '127.0.0.1', '--port', '0', '--grpc-port', '0'];
      server = await startServer('npx', [...serve, '--data-dir', data], user, npmEnv());
    });
    after(() => server?.stop());

    it('starts from what its files ship, and its card answers', async () => {
      const response = await fetch(`${server!.url}/.well-known/agent-card.json`);
      assert.equal(response.status, 200);
      const card = (await response.json()) as { supportedInterfaces: { protocolBinding: string }[] };
      const bindings = card.supportedInterfaces.map((i) => i.protocolBinding);
      assert.deepEqual([...new Set(bindings)].sort(), ['GRPC', 'HTTP+JSON', 'JSONRPC']);
    });

    it("the packed kit's every transport, gRPC too, passes against it", async () => {
      const { code, report } = await runKit(KIT, server!.url, embedder);
      assert.deepEqual(failedRules(report), []);
      assert.equal(code, 0);
      assert.deepEqual(report.transports, ['JSONRPC', 'HTTP+JSON', 'GRPC']);
      for (const transport of report.transports)
        assert.ok(
          report.results.some((r) => r.transport === transport && r.outcome === 'pass'),
          `a check passed over ${transport}`,
        );
    });
  });
});
