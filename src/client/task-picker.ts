/**
 * `chat --resume` on a terminal: the user's recent conversations, one a row (title, state, how
 * long ago), to choose one with the arrow keys and Enter; Escape or Ctrl+C chooses none. The
 * rows are drawn under the cursor and erased once the choice is made.
 */
import { emitKeypressEvents } from 'node:readline';
import type { RecentTask } from '../recent-tasks.js';
import { stateName } from '../wire.js';
import type { Key } from './line-editor.js';
import { styleFor, type Style } from './render.js';
import { columnsOf, fit } from './text-width.js';

const HEADING = 'Resume a conversation: ↑/↓ choose, Enter opens it, Esc starts a new one';
const CLEAR_BELOW = '\x1b[J';

/** Resolves with the conversation chosen, or undefined when none was. */
export function pickTask(
  input: NodeJS.ReadStream,
  output: NodeJS.WriteStream,
  tasks: readonly RecentTask[],
  now = Date.now(),
): Promise<RecentTask | undefined> {
  let chosen = 0;
  let drawnRows = 0;
  const style = styleFor(output);
  const draw = () => {
    const columns = Math.max(20, output.columns ?? 80);
    const rows = [
      style.dim(fit(HEADING, columns - 1)),
      ...tasks.map((task, i) => row(task, i === chosen, columns - 1, now, style)),
    ];
    const up = drawnRows > 1 ? `\x1b[${drawnRows - 1}A` : '';
    output.write(`\r${up}${CLEAR_BELOW}${rows.join('\r\n')}`);
    drawnRows = rows.length;
  };
  return new Promise((resolve) => {
    const done = (task: RecentTask | undefined) => {
      input.off('keypress', onKey);
      input.setRawMode(false);
      input.pause();
      output.write(`\r${drawnRows > 1 ? `\x1b[${drawnRows - 1}A` : ''}${CLEAR_BELOW}`);
      resolve(task);
    };
    const onKey = (_char: string | undefined, key: Key | undefined) => {
      const name = key?.ctrl ? `C-${key.name}` : key?.name;
      if (name === 'up' || name === 'C-p') chosen = (chosen + tasks.length - 1) % tasks.length;
      else if (name === 'down' || name === 'C-n') chosen = (chosen + 1) % tasks.length;
      else if (name === 'return') return done(tasks[chosen]);
      else if (name === 'escape' || name === 'C-c' || name === 'C-d') return done(undefined);
      else return;
      draw();
    };
    emitKeypressEvents(input);
    input.setRawMode(true);
    input.on('keypress', onKey);
    input.resume();
    draw();
  });
}

/** One conversation on one row: the marker when chosen, its title, then its state and age at the right. */
function row(task: RecentTask, chosen: boolean, columns: number, now: number, style: Style): string {
  const about = ` ${stateName(task.state)} · ${ago(task.updated, now)}`;
  const title = fit(task.title || '(no messages)', Math.max(10, columns - 2 - columnsOf(about) - 1));
  const gap = ' '.repeat(Math.max(1, columns - 2 - columnsOf(title) - columnsOf(about)));
  return `${chosen ? '❯ ' : '  '}${chosen ? style.command(title) : title}${gap}${style.dim(about)}`;
}

/** How long ago an ISO 8601 time was, in the largest whole unit. */
export function ago(iso: string | undefined, now: number): string {
  const then = iso ? Date.parse(iso) : NaN;
  if (Number.isNaN(then)) return 'when unknown';
  const minutes = Math.floor((now - then) / 60_000);
  if (minutes < 1) return 'just now';
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ago`;
  const days = Math.floor(hours / 24);
  return days === 1 ? 'yesterday' : `${days} days ago`;
}
