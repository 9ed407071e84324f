/**
 * The project's instruction files (config `instructions`): every turn sends their texts after
 * the system prompt, in order (CMD-36); a file that changes is sent as it is now; `/memory`
 * lists them with their sizes and statuses.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { dataOf, send, startTestHarness, textOf, type TestHarness } from './support.js';
import { within } from '../support/wait.js';

let dir: string;
let h: TestHarness;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-instructions-'));
  writeFileSync(join(dir, 'AGENTS.md'), 'Answer in French.');
  writeFileSync(join(dir, 'style.md'), 'Be brief.');
  writeFileSync(join(dir, 'huge.md'), 'x'.repeat(2000));
  h = await startTestHarness({
    config: {
      systemPrompt: 'You are a test agent.',
      // Absolute here, so the test does not depend on where it runs; relative ones are read from the start folder.
      instructions: [join(dir, 'style.md'), join(dir, 'missing.md'), join(dir, 'huge.md'), join(dir, 'AGENTS.md')],
      instructionsMaxChars: 1000,
    },
  });
});

after(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The system message of the model request that carried `text`. */
const systemSentWith = (text: string): string => {
  const request = h
    .chatRequests()
    .filter((r: any) => JSON.stringify(r.messages).includes(text))
    .at(-1);
  assert.ok(request, `a model request carried "${text}"`);
  assert.equal(request.messages[0].role, 'system');
  return request.messages[0].content;
};

describe('project instruction files', () => {
  it('CMD-36: the model is sent the system prompt, then each loaded instruction file in the configured order', async () => {
    const client = await h.client('JSONRPC');
    await send(client, 'first question');
    assert.equal(
      systemSentWith('first question'),
      [
        'You are a test agent.',
        `Instructions from ${join(dir, 'style.md')}:\n\nBe brief.`,
        `Instructions from ${join(dir, 'AGENTS.md')}:\n\nAnswer in French.`,
      ].join('\n\n'),
    );
  });

  it('CMD-36: after a file changes, the next turn sends its new text', async () => {
    const client = await h.client('HTTP+JSON');
    const task = await send(client, 'before the change');
    assert.match(systemSentWith('before the change'), /Be brief\./);
    writeFileSync(join(dir, 'style.md'), 'Be thorough.');
    await within(
      'the changed file read again',
      h.harness.instructions.until((files) => files[0]!.chars === 'Be thorough.'.length),
    );
    await send(client, 'after the change', { taskId: task.id, contextId: task.contextId });
    const system = systemSentWith('after the change');
    assert.match(system, /Be thorough\./);
    assert.doesNotMatch(system, /Be brief\./);
  });

  it('/memory lists each file in order with its size in characters and its status', async () => {
    const client = await h.client('GRPC');
    const task = await send(client, 'hello');
    const ids = { taskId: task.id, contextId: task.contextId, messageId: randomUUID() };
    const replied = await send(client, '/memory', ids);
    const reply = replied.status?.message;
    const style = h.harness.instructions.listing()[0]!;
    assert.deepEqual(dataOf(reply), {
      files: [
        { path: join(dir, 'style.md'), chars: style.chars, status: 'loaded' },
        { path: join(dir, 'missing.md'), chars: 0, status: 'missing' },
        { path: join(dir, 'huge.md'), chars: 2000, status: 'too-large' },
        { path: join(dir, 'AGENTS.md'), chars: 17, status: 'loaded' },
      ],
    });
    const text = textOf(reply);
    assert.match(text, /style\.md: \d+ characters, loaded/);
    assert.match(text, /missing\.md: missing: skipped/);
    assert.match(text, /huge\.md: 2,000 characters, too large \(the most is 1,000, "instructionsMaxChars"\): left out/);
    assert.match(text, /AGENTS\.md: 17 characters, loaded/);
    assert.ok(text.indexOf('style.md') < text.indexOf('AGENTS.md'), 'in the configured order');
    assert.ok(
      !h.chatRequests().some((r: any) => JSON.stringify(r.messages).includes('/memory')),
      'the command stays out of the model (CMD-7)',
    );

    writeFileSync(join(dir, 'AGENTS.md'), 'Answer in Italian, please.');
    await within(
      'the changed file read again',
      h.harness.instructions.until((files) => files[3]!.chars === 26),
    );
    const resent = await send(client, '/memory', ids);
    assert.deepEqual(
      dataOf(resent.status?.message),
      dataOf(reply),
      'CMD-34: a resend gets the first reply, not a new run',
    );
    const again = await send(client, '/memory', { taskId: task.id, contextId: task.contextId });
    assert.equal(dataOf(again.status?.message).files[3].chars, 26, 'a new /memory lists the file as it is now');
  });
});

describe('/memory without instruction files', () => {
  it('says how to add them', async () => {
    const bare = await startTestHarness();
    try {
      const client = await bare.client('JSONRPC');
      const replied = await send(client, '/memory');
      const reply = replied.status?.message;
      assert.deepEqual(dataOf(reply), { files: [] });
      assert.match(
        textOf(reply),
        /No instruction files are configured\.\nInstruction files are listed under "instructions"/,
      );
    } finally {
      await bare.close();
    }
  });
});
