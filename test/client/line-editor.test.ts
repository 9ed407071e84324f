/**
 * The message being typed at the chat's prompt, key by key, as Node's keypress parser reports
 * the keys: several lines, a paste kept whole, history.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { LineEditor, type EditorAction } from '../../src/client/line-editor.js';

function typed(editor: LineEditor, text: string): void {
  for (const char of text) editor.key(char, { name: char.toLowerCase(), sequence: char });
}

const ENTER = { name: 'return', sequence: '\r' };

describe('the line editor', () => {
  it('a bracketed paste is inserted whole, its line breaks kept; Enter inside it sends nothing', () => {
    const editor = new LineEditor();
    const actions: EditorAction[] = [editor.key(undefined, { name: 'paste-start' })];
    for (const char of 'a\rb\rc') actions.push(editor.key(char, char === '\r' ? ENTER : { name: char }));
    actions.push(editor.key(undefined, { name: 'paste-end' }));
    assert.ok(!actions.some((a) => a.kind === 'submit'));
    assert.equal(editor.text, 'a\nb\nc');
    assert.deepEqual(editor.key('\r', ENTER), { kind: 'submit', text: 'a\nb\nc' });
    assert.equal(editor.text, '');
  });

  it('Alt+Enter, Ctrl+J and a \\ before Enter start a new line', () => {
    const editor = new LineEditor();
    typed(editor, 'one');
    editor.key('\r', { ...ENTER, meta: true });
    typed(editor, 'two\\');
    assert.equal(editor.key('\r', ENTER).kind, 'changed');
    typed(editor, 'three');
    editor.key('\n', { name: 'enter' });
    typed(editor, 'four');
    assert.deepEqual(editor.key('\r', ENTER), { kind: 'submit', text: 'one\ntwo\nthree\nfour' });
  });

  it('up and down move between the lines of a message, then through the history', () => {
    const editor = new LineEditor();
    typed(editor, 'old');
    editor.key('\r', ENTER);
    typed(editor, 'ab');
    editor.key('\r', { ...ENTER, meta: true });
    typed(editor, 'cd');
    editor.key(undefined, { name: 'up' });
    assert.equal(editor.cursor, 2, 'the line above, same column');
    editor.key(undefined, { name: 'up' });
    assert.equal(editor.text, 'old');
    editor.key(undefined, { name: 'down' });
    assert.equal(editor.text, 'ab\ncd', 'the draft comes back');
  });

  it('Ctrl+C interrupts, Ctrl+D on an empty message ends input, Tab asks for a completion', () => {
    const editor = new LineEditor();
    assert.equal(editor.key(undefined, { name: 'c', ctrl: true }).kind, 'interrupt');
    assert.equal(editor.key('\t', { name: 'tab' }).kind, 'complete');
    typed(editor, 'x');
    assert.equal(editor.key(undefined, { name: 'd', ctrl: true }).kind, 'none', 'nothing after the cursor');
    editor.key(undefined, { name: 'u', ctrl: true });
    assert.equal(editor.text, '');
    assert.equal(editor.key(undefined, { name: 'd', ctrl: true }).kind, 'eof');
  });
});
