/**
 * The built-in workspace tools (TOOL-6): every path stays under the root, symlinks included,
 * for read, list, search, write and edit; `shell` runs only what a rule or an approval grants,
 * bounded in time and output.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import { workspaceSchema } from '../../src/config/workspace.js';
import { openWorkspace, WorkspaceTools, type BuiltinTool } from '../../src/tools/workspace-tools.js';
import { shellAllowed } from '../../src/tools/workspace-shell.js';

let base: string;
let root: string;
let outside: string;
let tools: Map<string, BuiltinTool>;
const signal = new AbortController().signal;

async function open(extra: Record<string, unknown> = {}): Promise<Map<string, BuiltinTool>> {
  const config = workspaceSchema.parse({ root, tools: ['read', 'list', 'search', 'write', 'edit', 'shell'], ...extra });
  const box = await WorkspaceTools.open({ config, env: process.env, toolOutputChars: 5000, log: silentLogger });
  return new Map(box.entries().map((entry) => [entry.tool, entry]));
}
const call = (tool: string, input: unknown) => tools.get(tool)!.call(input, signal);

before(async () => {
  base = mkdtempSync(join(tmpdir(), 'th-ws-'));
  root = join(base, 'root');
  outside = join(base, 'outside');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'src', 'a.txt'), 'alpha\nbeta\nsecret-inside\n');
  writeFileSync(join(outside, 'secret.txt'), 'secret-outside\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'link-file'));
  symlinkSync(outside, join(root, 'link-dir'));
  tools = await open();
});

after(() => rmSync(base, { recursive: true, force: true }));

describe('the workspace root (TOOL-6)', () => {
  const escapes = () => [
    ['../outside/secret.txt', 'a relative path up and out'],
    [join(outside, 'secret.txt'), 'an absolute path outside'],
    ['link-file', 'a symlink to a file outside'],
    ['link-dir/secret.txt', 'a path through a symlinked folder outside'],
  ];

  for (const [path, what] of escapes()) {
    it(`TOOL-6: read refuses ${what}`, async () => {
      const outcome = await call('read', { path });
      assert.equal(outcome.status, 'failed');
      assert.doesNotMatch(outcome.output, /secret-outside/);
      if (!path!.startsWith('/')) assert.doesNotMatch(outcome.output, new RegExp(base), 'no real path is told');
    });
    it(`TOOL-6: write refuses ${what}, and writes nothing`, async () => {
      const outcome = await call('write', { path, content: 'overwritten' });
      assert.equal(outcome.status, 'failed');
      assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret-outside\n');
    });
    it(`TOOL-6: edit refuses ${what}, and changes nothing`, async () => {
      const outcome = await call('edit', { path, old: 'secret', new: 'changed' });
      assert.equal(outcome.status, 'failed');
      assert.equal(readFileSync(join(outside, 'secret.txt'), 'utf8'), 'secret-outside\n');
    });
  }

  it('TOOL-6: write refuses a new file whose parent is a symlink outside', async () => {
    const outcome = await call('write', { path: 'link-dir/new.txt', content: 'x' });
    assert.equal(outcome.status, 'failed');
    assert.match(outcome.output, /outside the workspace/);
    assert.equal(existsSync(join(outside, 'new.txt')), false);
    const deeper = await call('write', { path: 'link-dir/sub/new.txt', content: 'x' });
    assert.equal(deeper.status, 'failed');
    assert.equal(existsSync(join(outside, 'sub')), false);
  });

  for (const path of ['..', '../outside', outside, 'link-dir']) {
    it(`TOOL-6: list and search refuse the folder ${JSON.stringify(path.replace(base, '<tmp>'))}`, async () => {
      const listed = await call('list', { path });
      assert.equal(listed.status, 'failed');
      assert.doesNotMatch(listed.output, /secret\.txt/);
      const found = await call('search', { pattern: 'secret', path });
      assert.equal(found.status, 'failed');
      assert.doesNotMatch(found.output, /secret-outside/);
    });
  }

  it('TOOL-6: search of the root does not follow a symlink or a glob out of it', async () => {
    const upward = await call('search', { pattern: 'secret', glob: '../outside/**' });
    assert.doesNotMatch(upward.output, /secret-outside/, 'a glob that climbs out finds nothing there');
    const found = await call('search', { pattern: 'secret' });
    assert.equal(found.status, 'succeeded');
    assert.match(found.output, /^src\/a\.txt:3: secret-inside$/m);
    assert.doesNotMatch(found.output, /secret-outside/);
  });

  it('TOOL-6: inside the root, each tool does its work', async () => {
    assert.equal((await call('read', { path: 'src/a.txt' })).output, 'alpha\nbeta\nsecret-inside\n');
    assert.equal(
      (await call('read', { path: join(root, 'src', 'a.txt') })).status,
      'succeeded',
      'an absolute path inside',
    );
    assert.deepEqual((await call('list', {})).output.split('\n'), ['link-dir@', 'link-file@', 'src/']);
    const found = await call('search', { pattern: 'be.a', glob: '**/*.txt' });
    assert.equal(found.output, 'src/a.txt:2: beta');
    assert.equal((await call('write', { path: 'new/deep/b.txt', content: 'one one' })).status, 'succeeded');
    assert.equal(readFileSync(join(root, 'new', 'deep', 'b.txt'), 'utf8'), 'one one');
    const twice = await call('edit', { path: 'new/deep/b.txt', old: 'one', new: 'two' });
    assert.equal(twice.status, 'failed', 'an ambiguous edit is refused');
    assert.match(twice.output, /occurs 2 times/);
    assert.equal(
      (await call('edit', { path: 'new/deep/b.txt', old: 'one', new: 'two', all: true })).status,
      'succeeded',
    );
    assert.equal(readFileSync(join(root, 'new', 'deep', 'b.txt'), 'utf8'), 'two two');
    assert.equal((await call('search', { pattern: '(' })).status, 'failed', 'a bad regular expression is told');
  });

  it('TOOL-6: write and edit ask for approval by default; approveWrites: false lets them run', async () => {
    const asking = (entry: BuiltinTool, input: unknown) =>
      typeof entry.needsApproval === 'function' ? entry.needsApproval(input) : entry.needsApproval;
    assert.equal(asking(tools.get('write')!, {}), true);
    assert.equal(asking(tools.get('edit')!, {}), true);
    assert.equal(asking(tools.get('read')!, {}), false);
    const trusted = await open({ approveWrites: false });
    assert.equal(asking(trusted.get('write')!, {}), false);
  });
});

describe('the shell tool (TOOL-6)', () => {
  it('TOOL-6: only a simple command matching a Bash(...) rule runs without asking', () => {
    const rules = ['Bash(git diff:*)', 'Bash(ls)'];
    assert.equal(shellAllowed(rules, 'git diff'), true);
    assert.equal(shellAllowed(rules, 'git diff --stat src'), true);
    assert.equal(shellAllowed(rules, 'git diffx'), false);
    assert.equal(shellAllowed(rules, 'git diff; rm -rf x'), false, 'a second command is not granted');
    assert.equal(shellAllowed(rules, 'git diff $(rm x)'), false);
    assert.equal(shellAllowed(rules, 'git diff | sh'), false);
    assert.equal(shellAllowed(rules, 'ls'), true);
    assert.equal(shellAllowed(rules, 'ls -la'), false, 'Bash(ls) allows ls alone');
    assert.equal(shellAllowed([], 'ls'), false);
    const entry = tools.get('shell')!;
    assert.equal(typeof entry.needsApproval === 'function' && entry.needsApproval({ command: 'ls' }), true);
  });

  it('TOOL-6: a command runs in the root, with a small environment, its exit told', async () => {
    const ran = await call('shell', { command: 'pwd' });
    assert.equal(ran.status, 'succeeded');
    assert.match(ran.output, /root\n\[exit code 0\]$/);
    const failed = await call('shell', { command: 'ls no-such-file' });
    assert.equal(failed.status, 'failed');
    assert.match(failed.output, /\[exit code [1-9]\d*\]$/);
    process.env.TH_WS_SECRET = 'leak';
    try {
      const env = await call('shell', { command: 'env' });
      assert.doesNotMatch(env.output, /TH_WS_SECRET/);
    } finally {
      delete process.env.TH_WS_SECRET;
    }
  });

  it('TOOL-6: output is bounded and a command past its timeout is killed', async () => {
    const bounded = await open({ shell: { maxOutputChars: 100, timeoutMs: 200 } });
    const long = await bounded.get('shell')!.call({ command: 'seq 1 10000' }, signal);
    assert.match(long.output, /\[output cut: the first 100 of \d+ characters are shown\]/);
    const slow = await bounded.get('shell')!.call({ command: 'sleep 30' }, signal);
    assert.equal(slow.status, 'failed');
    assert.match(slow.output, /did not finish within 200 ms and was killed/);
  });
});

describe('the workspace config (TOOL-6)', () => {
  it('TOOL-6: a root that is not a folder, or an MCP server called "workspace", stops the start with a clear error', async () => {
    const config = (extra: Record<string, unknown>) => ({
      workspace: workspaceSchema.parse({ root, tools: ['read'], ...extra }),
      toolOutputChars: 5000,
      mcpServers: {},
    });
    await assert.rejects(openWorkspace({ config: config({ root: join(base, 'missing') }) }, silentLogger), {
      code: 'config_invalid',
      message: /is not an existing folder/,
    });
    await assert.rejects(openWorkspace({ config: { ...config({}), mcpServers: { workspace: {} } } }, silentLogger), {
      code: 'config_invalid',
      message: /mcpServers\.workspace: the name is taken/,
    });
    assert.equal(await openWorkspace({ config: { toolOutputChars: 5000, mcpServers: {} } }, silentLogger), undefined);
    assert.throws(() => workspaceSchema.parse({ root, tools: ['delete'] }), /must be one of/);
    assert.throws(() => workspaceSchema.parse({ root, shell: { allow: ['git diff'] } }), /Bash\(git diff:\*\)/);
  });
});
