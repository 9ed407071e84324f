/**
 * What the page draws for what was done to a conversation (the conversation extension): a
 * compaction point as a collapsed block that opens on its summary, a rewind mark as a thin
 * divider. The summary is what the model is sent in place of what came before it.
 */
import type { ChatEvent } from './events.js';
import { renderMarkdown } from './markdown.js';
import { element } from './dom.js';

type Mark = Extract<ChatEvent, { kind: 'compaction' | 'rewind' }>;

export function markOf(event: Mark): HTMLElement {
  if (event.kind === 'rewind') {
    const divider = element('div', 'rewind-mark');
    divider.setAttribute('role', 'separator');
    divider.title = `${event.hidden} message${event.hidden === 1 ? '' : 's'} taken back`;
    divider.append(element('span', undefined, 'rewound'));
    return divider;
  }
  const { charsBefore, charsAfter } = event.point;
  const block = element('details', 'compaction');
  const count = (n: number) => n.toLocaleString('en-US');
  block.append(element('summary', undefined, `Conversation compacted (${count(charsBefore)} → ${count(charsAfter)} characters)`)); // prettier-ignore
  const summary = element('div', 'compaction-summary');
  renderMarkdown(summary, event.text);
  block.append(summary);
  return block;
}
