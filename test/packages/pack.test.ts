/**
 * What would be published, installed as an embedder installs it: `npm pack` each package, the
 * tarballs unpacked (with `tar`) into a scratch project whose other packages are @a2a-js/sdk and
 * express (symlinks to this repository's node_modules, with their dependencies and the kit's:
 * nothing is fetched). The example mounts the packed extension on a bare `DefaultRequestHandler`
 * with /help and /time, and the packed kit passes it; the same server with two deliberate
 * defects fails on exactly those two rules.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { failedRules, runKit, startServerScript } from '../support/kit-run.js';
import { ROOT } from '../support/processes.js';

const PACKAGES = ['commands-extension', 'conform'];
const KIT = 'node_modules/@tiny-harness/conform/dist/bin.js';
/**
 * The scratch project's packages are symlinks into this repository's node_modules: Node would
 * resolve their imports from where the links point, finding there what the scratch project
 * lacks. Kept at the link, an import finds only what an install would have put beside it.
 */
const AS_INSTALLED = ['--preserve-symlinks'];

function run(command: string, args: string[], cwd: string): string {
  const result = spawnSync(command, args, { cwd, encoding: 'utf8' });
  assert.equal(result.status, 0, `${command} ${args.join(' ')}: ${result.stderr}`);
  return result.stdout;
}

/**
 * The packages `names` need at run time, found in the root node_modules (its layout is flat):
 * what npm installs with them, so their dependencies and their peers, but not the peers marked
 * optional (the SDK's gRPC and database peers), which a package that needs them must declare.
 */
function closure(names: string[]): Set<string> {
  const found = new Set<string>();
  const queue = [...names];
  while (queue.length) {
    const name = queue.pop()!;
    const manifest = join(ROOT, 'node_modules', name, 'package.json');
    if (found.has(name) || !existsSync(manifest)) continue;
    found.add(name);
    const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as Record<string, Record<string, unknown> | undefined>;
    const optional = (peer: string) =>
      (pkg.peerDependenciesMeta?.[peer] as { optional?: boolean } | undefined)?.optional;
    const peers = Object.keys(pkg.peerDependencies ?? {}).filter((peer) => !optional(peer));
    queue.push(...Object.keys({ ...pkg.dependencies, ...pkg.optionalDependencies }), ...peers);
  }
  return found;
}

describe('the packages as published', () => {
  let scratch: string;
  before(() => {
    scratch = mkdtempSync(join(tmpdir(), 'tiny-harness-pack-'));
    const modules = join(scratch, 'node_modules');
    const declared: Record<string, string> = {};
    for (const name of PACKAGES) {
      const dir = join(ROOT, 'packages', name);
      const tarball = run('npm', ['pack', '--silent', '--pack-destination', scratch], dir).trim().split('\n').at(-1)!;
      const target = join(modules, '@tiny-harness', name);
      mkdirSync(target, { recursive: true });
      run('tar', ['-xzf', join(scratch, tarball), '-C', target, '--strip-components=1'], scratch);
      declared[`@tiny-harness/${name}`] = `file:${tarball}`;
      const pkg = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8')) as { version: string };
      assert.equal(pkg.version, '0.1.0');
    }
    const needed = closure(['@a2a-js/sdk', 'express', ...Object.keys(conformDependencies())]);
    for (const name of needed) {
      mkdirSync(dirname(join(modules, name)), { recursive: true });
      symlinkSync(join(ROOT, 'node_modules', name), join(modules, name), 'dir');
    }
    writeFileSync(
      join(scratch, 'package.json'),
      JSON.stringify({ type: 'module', dependencies: { ...declared, '@a2a-js/sdk': '1.3.0', express: '5.3.0' } }),
    );
    const example = readFileSync(join(ROOT, 'examples', 'commands-on-sdk.mjs'), 'utf8');
    writeFileSync(join(scratch, 'agent.mjs'), example);
    const mount = 'const handler = mountCommandsOnSdk({ card, executor, registry });';
    assert.ok(example.includes(mount), 'the example mounts the extension in one line');
    writeFileSync(
      join(scratch, 'defective.mjs'),
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
    for (const name of PACKAGES) {
      const target = join(scratch, 'node_modules', '@tiny-harness', name);
      for (const file of ['README.md', 'CHANGELOG.md', 'dist/index.d.ts', 'spec/commands-extension-v1.md'])
        assert.ok(existsSync(join(target, file)), `@tiny-harness/${name} ships ${file}`);
    }
  });

  it('the packed extension on a bare DefaultRequestHandler: every rule the packed kit checks passes', async () => {
    const server = await startServerScript('agent.mjs', scratch, AS_INSTALLED);
    try {
      const { code, report } = await runKit(KIT, server.url, scratch, AS_INSTALLED);
      assert.deepEqual(failedRules(report), []);
      assert.equal(code, 0);
      assert.ok(report.summary.pass > 20, `${report.summary.pass} checks passed`);
    } finally {
      await server.stop();
    }
  });

  it('the same server with two deliberate defects fails on exactly those rules (CMD-13, CMD-17)', async () => {
    const server = await startServerScript('defective.mjs', scratch, AS_INSTALLED);
    try {
      const { code, report } = await runKit(KIT, server.url, scratch, AS_INSTALLED);
      assert.deepEqual(failedRules(report), ['CMD-13', 'CMD-17']);
      assert.equal(code, 1);
    } finally {
      await server.stop();
    }
  });
});

function conformDependencies(): Record<string, string> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'packages', 'conform', 'package.json'), 'utf8')) as {
    dependencies: Record<string, string>;
  };
  return pkg.dependencies;
}
