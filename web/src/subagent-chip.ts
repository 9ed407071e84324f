/**
 * A sub-agent the model delegated to (a sub-task note naming its agent): a chip with the agent's
 * name and the sub-task's state, kept current while it runs. It is a link that opens the
 * sub-task's own conversation, its running turn followed, in a new tab (`?task=<id>`, main.ts),
 * so that this page goes on with the turn that waits for it.
 */
import type { TaskState } from '@a2a-js/sdk';
import { stateName } from '../../src/wire.js';
import { element } from './dom.js';

/** The page's address parameter that names a task to open instead of the kept conversation. */
export const TASK_PARAM = 'task';

/** The address of the page open on task `id`. */
export function taskAddress(id: string): string {
  return `?${new URLSearchParams({ [TASK_PARAM]: id }).toString()}`;
}

export function subagentChip(
  id: string,
  agent: string,
  watch: (id: string, onState: (state: TaskState | undefined) => void) => Promise<void>,
): HTMLElement {
  const chip = element('a', 'subagent-chip');
  chip.href = taskAddress(id);
  chip.target = '_blank';
  chip.rel = 'noopener';
  chip.title = `Open sub-task ${id} (sub-agent ${agent}) in a new tab`;
  chip.dataset['taskId'] = id;
  const state = element('span', 'subagent-state', '');
  chip.append(element('span', 'subagent-name', `↳ sub-agent ${agent}`), state);
  const showState = (value: TaskState | undefined) => {
    state.textContent = stateName(value);
    chip.dataset['state'] = stateName(value);
  };
  watch(id, showState).catch(() => undefined);
  return chip;
}
