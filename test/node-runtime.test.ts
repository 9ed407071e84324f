/**
 * The Node.js versions (issue 33): CI runs the suite under Node 20, which the machines run, and
 * again under Node 24 (.ci/node24). `engines` says which lines are supported and the README
 * quotes it; the suite's Node is one of them; and every Node child a test, a script or a
 * benchmark starts runs the Node that started it (`process.execPath`), so a run under Node 24
 * is Node 24 throughout.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './support/processes.js';

const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  engines: { node: string };
  dependencies: Record<string, string>;
};

/** Whether `version` (`v24.1.0`) is in a range of `^x.y.z` alternatives, as `engines` writes it. */
function admits(range: string, version: string): boolean {
  const [major, minor, patch] = version.replace(/^v/, '').split('.').map(Number) as [number, number, number];
  return range.split('||').some((alternative) => {
    const match = /^\^(\d+)\.(\d+)\.(\d+)$/.exec(alternative.trim());
    assert.ok(match, `engines alternatives are written ^x.y.z: ${alternative}`);
    const [, m, n, p] = match.map(Number) as [number, number, number, number];
    return major === m && (minor > n || (minor === n && patch >= p));
  });
}

/** Files of `dir` (recursively) ending in one of `exts`. */
function sources(dir: string, exts: string[]): string[] {
  return readdirSync(join(ROOT, dir), { recursive: true })
    .map(String)
    .filter((f) => exts.some((ext) => f.endsWith(ext)) && !f.includes('node_modules'))
    .map((f) => join(dir, f));
}

describe('the Node.js versions', () => {
  it('engines names the LTS lines 20 (from 20.18), 22 and 24, and the Node running this suite is one of them', () => {
    assert.equal(manifest.engines.node, '^20.18.0 || ^22.0.0 || ^24.0.0');
    assert.ok(admits(manifest.engines.node, process.version), `${process.version} is supported`);
    assert.ok(admits(manifest.engines.node, 'v24.22.3') && !admits(manifest.engines.node, 'v20.17.0'));
  });

  it('the README quotes engines', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
    assert.ok(readme.includes(`\`"engines": "${manifest.engines.node}"\``), 'the README quotes the range');
  });

  it('while engines admits Node 20 the AI SDK stays on 6: ai 7 and its providers need Node 22 (docs/models.md)', () => {
    if (!admits(manifest.engines.node, 'v20.18.0')) return;
    const majors = Object.fromEntries(
      ['ai', '@ai-sdk/openai', '@ai-sdk/anthropic', '@ai-sdk/openai-compatible', '@ai-sdk/provider'].map((name) => [
        name,
        Number(manifest.dependencies[name]?.split('.')[0]),
      ]),
    );
    assert.deepEqual(majors, {
      ai: 6,
      '@ai-sdk/openai': 3,
      '@ai-sdk/anthropic': 3,
      '@ai-sdk/openai-compatible': 2,
      '@ai-sdk/provider': 3,
    });
    const models = readFileSync(join(ROOT, 'docs/models.md'), 'utf8');
    assert.match(models, /^## The AI SDK: version 6, and what 7 would change$/m);
  });

  it('every Node child a test, script or benchmark starts is process.execPath, not the node on PATH', () => {
    const files = [...sources('test', ['.ts']), ...sources('scripts', ['.mjs', '.ts']), ...sources('bench', ['.ts'])];
    const spawnsNode =
      /\b(?:spawn|spawnSync|spawnGroup|execFile|execFileSync|execSync|exec)\(\s*['"`](?:node|npx|tsx)\b/;
    const commandNode = /\bcommand:\s*['"](?:node|tsx)['"]/;
    const found = files.filter((file) => {
      const text = readFileSync(join(ROOT, file), 'utf8');
      return spawnsNode.test(text) || commandNode.test(text);
    });
    assert.deepEqual(found, []);
    assert.ok(files.length > 100, `${files.length} files read`);
  });
});
