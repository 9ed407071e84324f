import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CommandUsageError } from '../../src/commands/index.js';
import {
  expandMarkers,
  MAX_INSERTED_FILE_CHARS,
  segmentsOf,
  type MarkerGrants,
} from '../../src/file-commands/markers.js';

let root: string;
let workspace: string;
let grants: MarkerGrants;
const source = { label: '/check', fileName: 'check.md', allowedTools: ['Bash(echo:*)', 'workspace_read'] };

before(() => {
  root = mkdtempSync(join(tmpdir(), 'tiny-harness-markers-'));
  workspace = join(root, 'ws');
  mkdirSync(join(workspace, 'notes'), { recursive: true });
  writeFileSync(join(workspace, 'README.md'), 'The readme.');
  writeFileSync(join(workspace, 'notes', 'todo.md'), 'Buy milk.');
  writeFileSync(join(workspace, 'big.txt'), 'x'.repeat(MAX_INSERTED_FILE_CHARS + 1));
  writeFileSync(join(root, 'secret.txt'), 'the secret');
  symlinkSync(join(root, 'secret.txt'), join(workspace, 'link.txt'));
  grants = { root: workspace, allowShell: true, timeoutMs: 10_000, maxOutputChars: 1000, env: process.env };
});

after(() => rmSync(root, { recursive: true, force: true }));

/** The refusal's text, failing the test when the prompt was built instead. */
async function refusal(template: string, use = grants, from = source): Promise<string> {
  try {
    const built = await expandMarkers(template, '', from, use);
    assert.fail(`expected a refusal, got: ${built}`);
  } catch (error) {
    assert.ok(error instanceof CommandUsageError, String(error));
    return error.message;
  }
}

describe('markers in command files (CMD-38)', () => {
  it('CMD-38: "@" is a file only at a word start with a path; e-mail addresses and @names stay', () => {
    assert.deepEqual(segmentsOf('Mail me@example.com or @alice about @notes/todo.md, then !`echo hi`.'), [
      { kind: 'text', text: 'Mail me@example.com or @alice about ' },
      { kind: 'file', path: 'notes/todo.md' },
      { kind: 'text', text: ', then ' },
      { kind: 'shell', command: 'echo hi' },
      { kind: 'text', text: '.' },
    ]);
  });

  it('CMD-38: with both grants, !`cmd` runs in the workspace and @path inserts the file; arguments are never expanded as markers', async () => {
    const prompt = await expandMarkers(
      'Status: !`echo from-shell`\nReadme: @README.md\nTodo (@notes/todo.md). Args: $ARGUMENTS',
      '@README.md !`echo no`',
      source,
      grants,
    );
    assert.equal(prompt, 'Status: from-shell\nReadme: The readme.\nTodo (@notes/todo.md). Args: @README.md !`echo no`');
  });

  it('TOOL-6: !`cmd` is refused without the allowed-tools grant, without commands.allowShell, and without a workspace; nothing runs', async () => {
    const marker = join(workspace, 'ran');
    const touch = `!\`touch ${marker}\``;
    assert.match(await refusal(`${touch}`), /needs "Bash\(touch:\*\)" in check\.md's allowed-tools/);
    assert.match(await refusal('!`echo hi`', { ...grants, allowShell: false }), /needs commands\.allowShell on/);
    const { root: _root, ...noRoot } = grants;
    assert.match(await refusal('!`echo hi`', noRoot), /no workspace folder is configured \(workspace\.root\)/);
    assert.match(await refusal('!`echo hi`', grants, { ...source, allowedTools: [] }), /needs "Bash\(echo:\*\)"/);
    // One refused marker: the granted command before it does not run either.
    const text = await refusal(`${touch} @missing.md`, grants, { ...source, allowedTools: ['Bash(touch:*)'] });
    assert.match(text, /^\/check was not run, and nothing of it ran \(CMD-38, TOOL-6\): /);
    assert.match(text, /@missing\.md: no such file in the workspace folder/);
    assert.equal(existsSync(marker), false, 'the granted command did not run');
  });

  it('TOOL-6: @path out of the workspace (../, absolute, a symlink) is refused, and a missing or too large file is named', async () => {
    for (const path of ['../secret.txt', join(root, 'secret.txt'), 'link.txt']) {
      assert.match(
        await refusal(`Read @${path} now`),
        new RegExp(`@${path.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}: outside the workspace folder`),
      );
    }
    assert.match(await refusal('See @nowhere/file.md.'), /@nowhere\/file\.md: no such file in the workspace folder/);
    assert.match(await refusal('See @big.txt'), /@big\.txt: larger than 100,000 characters/);
    assert.doesNotMatch(await refusal('See @link.txt'), /the secret|tiny-harness-markers/);
  });
});
