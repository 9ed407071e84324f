/**
 * The command list under the page's input: the commands (or argument values) matching what is
 * typed, one highlighted, picked with the mouse or the keys (`completion.ts` keeps the state).
 */
import type { Completion } from './completion.js';
import { element } from './dom.js';

/** The command list under the input, drawn from the completion's state. */
export class CompletionList {
  constructor(
    private readonly list: HTMLElement,
    private readonly input: HTMLElement,
    private readonly onPick: (index: number) => void,
    private readonly onHighlight: (index: number) => void,
  ) {}

  render(completion: Completion): void {
    const items = completion.items;
    this.input.setAttribute('aria-expanded', String(items.length > 0));
    if (items.length === 0) {
      this.list.hidden = true;
      this.list.replaceChildren();
      this.input.removeAttribute('aria-activedescendant');
      return;
    }
    const options = items.map((command, index) => {
      const option = element('li', 'option');
      option.id = `command-option-${index}`;
      option.setAttribute('role', 'option');
      option.dataset['name'] = command.name;
      const active = index === completion.activeIndex;
      option.setAttribute('aria-selected', String(active));
      const head = element('div', 'option-head');
      head.append(element('span', 'option-name', command.label));
      if (command.hint) head.append(element('span', 'option-hint', command.hint));
      option.append(head, element('div', 'option-description', command.description));
      // mousedown, not click: the input keeps its focus.
      option.addEventListener('mousedown', (event) => {
        event.preventDefault();
        this.onPick(index);
      });
      option.addEventListener('mousemove', () => {
        if (index !== completion.activeIndex) this.onHighlight(index);
      });
      return option;
    });
    this.list.replaceChildren(...options);
    this.list.hidden = false;
    this.input.setAttribute('aria-activedescendant', `command-option-${completion.activeIndex}`);
    options[completion.activeIndex]?.scrollIntoView({ block: 'nearest' });
  }
}
