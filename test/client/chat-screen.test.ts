/**
 * What the chat writes when its output is not a terminal (a pipe, a file): a line from outside
 * the reply streaming now waits for the reply's line to end, so it never splits a run of words.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { ChatScreen } from '../../src/client/chat-screen.js';
import { styleFor } from '../../src/client/render.js';

function pipedScreen(): { screen: ChatScreen; written: () => string } {
  const output = new PassThrough();
  let written = '';
  output.setEncoding('utf8').on('data', (chunk: string) => (written += chunk));
  const screen = new ChatScreen(output as unknown as NodeJS.WriteStream, styleFor({ isTTY: false }));
  return { screen, written: () => written };
}

describe('the chat screen, piped', () => {
  it('a command reply during a streaming reply waits for the end of the line it came in', () => {
    const { screen, written } = pipedScreen();
    const noSubtask = () => assert.fail('no sub-task');
    screen.show([{ kind: 'text', text: 'one two th' }], noSubtask);
    screen.show([{ kind: 'command', name: 'status', text: 'Turn running: yes' }], noSubtask);
    screen.show([{ kind: 'text', text: 'ree four\nfive' }], noSubtask);
    assert.equal(written(), 'one two three four\n[/status] Turn running: yes\nfive');
    screen.endLine();
    assert.equal(written(), 'one two three four\n[/status] Turn running: yes\nfive\n');
  });

  it('at the end of the reply, a command reply still held is written below it', () => {
    const { screen, written } = pipedScreen();
    screen.show([{ kind: 'text', text: 'no line break' }], () => {});
    screen.show([{ kind: 'command', name: 'status', text: 'Turn running: yes' }], () => {});
    screen.endReply();
    screen.endLine();
    assert.equal(written(), 'no line break\n[/status] Turn running: yes\n');
  });
});
