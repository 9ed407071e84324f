/**
 * Where a command reply's time goes on its way from one instance to another's stream, step by
 * step, for bench/cross-instance.ts `--steps` (a CPU profile shows CPU, not the waits between
 * processes, which is most of this). In each harness child started while BENCH_STEP_TRACE=<dir>
 * is set, `installStepTrace` wraps a few methods of the engine, the coordination and the store
 * and records when each runs, with the command reply's message id where there is one; the
 * marks go to <dir>/<pid>.steps at exit. `stepBreakdown` joins them with the client's own
 * marks. Times are wall-clock milliseconds (`performance.timeOrigin + performance.now()`), the
 * same clock in every process of this machine.
 *
 * It wraps private methods by name (`TaskEngine.postNow`, `TaskEventLog.append`,
 * `PostgresCoordination.wake`): a diagnostic, not an interface; it fails loudly when one is gone.
 */
import { appendFileSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ms, summarize } from './report.js';

export const STEP_TRACE_VARIABLE = 'BENCH_STEP_TRACE';

type Method = (...args: unknown[]) => unknown;

const at = () => performance.timeOrigin + performance.now();

/** The message id of a status update event carrying a message, if it is one. */
function messageIdOf(event: unknown): string {
  return (
    (event as { data?: { status?: { message?: { messageId?: string } } } })?.data?.status?.message?.messageId ?? ''
  );
}

function wrap(prototype: object, name: string, around: (original: Method) => Method): void {
  const original = (prototype as Record<string, unknown>)[name];
  if (typeof original !== 'function') throw new Error(`step trace: no method ${name} to wrap (renamed?)`);
  (prototype as Record<string, unknown>)[name] = around(original as Method);
}

/** Records this process's steps until it exits, then writes them to `<dir>/<pid>.steps`. */
export async function installStepTrace(dir: string): Promise<void> {
  const marks: string[] = [];
  const mark = (step: string, id: string) => marks.push(`${step} ${at().toFixed(3)} ${id}`);
  process.on('exit', () => appendFileSync(join(dir, `${process.pid}.steps`), marks.join('\n') + '\n'));

  const { TaskEngine } = await import('../../src/runtime/engine.js');
  const { TaskBuses } = await import('../../src/runtime/task-buses.js');
  const { PostgresCoordination } = await import('../../src/store/postgres-coordination.js');
  const { TaskEventLog } = await import('../../src/store/task-event-log.js');
  const { SqlTaskStore } = await import('../../src/store/task-store.js');

  wrap(
    TaskEngine.prototype,
    'postNow',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        mark('post', (args[0] as { status?: { message?: { messageId?: string } } }).status?.message?.messageId ?? '');
        return original.apply(this, args);
      },
  );
  wrap(
    TaskBuses.prototype,
    'deliverHere',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        mark('publish', messageIdOf(args[1]));
        return original.apply(this, args);
      },
  );
  wrap(
    TaskEventLog.prototype,
    'append',
    (original) =>
      async function (this: unknown, ...args: unknown[]) {
        const ids = (args[2] as { json: string }[])
          .map(({ json }) => /"messageId":"([^"]+)"/.exec(json)?.[1] ?? '-')
          .join(',');
        mark('append', ids);
        try {
          return await original.apply(this, args);
        } finally {
          mark('appended', ids);
        }
      },
  );
  wrap(
    PostgresCoordination.prototype,
    'wake',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        mark('wake', '');
        return original.apply(this, args);
      },
  );
  wrap(
    PostgresCoordination.prototype,
    'follow',
    (original) =>
      function (this: unknown, taskId: unknown, deliver: unknown) {
        return original.call(this, taskId, (event: unknown) => {
          const id = messageIdOf(event);
          if (id) mark('deliver', id);
          (deliver as (event: unknown) => void)(event);
        });
      },
  );
  for (const [name, done] of [
    ['load', 'loaded'],
    ['save', 'saved'],
  ] as const) {
    wrap(
      SqlTaskStore.prototype,
      name,
      (original) =>
        async function (this: unknown, ...args: unknown[]) {
          const id =
            name === 'save'
              ? ((args[0] as { status?: { message?: { messageId?: string } } }).status?.message?.messageId ?? '')
              : '';
          mark(name, id);
          try {
            return await original.apply(this, args);
          } finally {
            mark(done, id);
          }
        },
    );
  }
}

/** The time between each `start` mark and the next `end` mark among `marks` (one process's, in order), summed. */
function pairedTime(marks: Mark[], start: string, end: string): number {
  let total = 0;
  let open: number | undefined;
  for (const m of marks) {
    if (m.step === start && open === undefined) open = m.at;
    else if (m.step === end && open !== undefined) {
      total += m.at - open;
      open = undefined;
    }
  }
  return total;
}

/** One command as the client saw it: when it was sent, answered, and its reply seen in A's stream. */
export interface ClientMarks {
  route: string;
  replyId: string;
  sent: number;
  answered: number;
  seen: number;
}

interface Mark {
  pid: string;
  step: string;
  at: number;
  ids: string[];
}

function readMarks(dir: string): Mark[] {
  const marks: Mark[] = [];
  for (const file of readdirSync(dir).filter((name) => name.endsWith('.steps'))) {
    const pid = file.replace(/\.steps$/, '');
    for (const line of readFileSync(join(dir, file), 'utf8').split('\n')) {
      if (!line) continue;
      const [step, time, ids = ''] = line.split(' ');
      marks.push({ pid, step: step!, at: Number(time), ids: ids.split(',') });
    }
  }
  return marks.sort((a, b) => a.at - b.at);
}

/**
 * The median of each step of each route, from the marks in `dir` and the client's: the
 * command's request until its post starts on the instance it was sent to (the task read, the
 * turn's lease checked), the post (the reply stored under the task's row lock), its append
 * (insert and NOTIFY, committed), the NOTIFY heard on A, A's read of the new events, and A's
 * stream (the SDK's result manager loads and stores the task again, then the event is written).
 */
export function stepBreakdown(dir: string, commands: ClientMarks[]): string[] {
  const marks = readMarks(dir);
  const first = (step: string, id: string, pid?: string, after = 0) =>
    marks.find((m) => m.step === step && m.ids.includes(id) && (!pid || m.pid === pid) && m.at >= after);
  const routes = new Map<string, Map<string, number[]>>();
  for (const command of commands) {
    const post = first('post', command.replyId);
    const publish = post && first('publish', command.replyId, post.pid);
    const append = post && first('append', command.replyId, post.pid);
    const appended = post && first('appended', command.replyId, post.pid);
    if (!post || !publish || !append || !appended) continue;
    const loads = marks.filter((m) => m.pid === post.pid && m.at >= command.sent && m.at <= post.at);
    const steps = new Map<string, number>([
      ['request to post (the task read, the lease checked)', post.at - command.sent],
      ['  of which the task read', pairedTime(loads, 'load', 'loaded')],
      ['post: the reply stored under the row lock', publish.at - post.at],
    ]);
    const deliver = marks.find((m) => m.step === 'deliver' && m.ids.includes(command.replyId) && m.pid !== post.pid);
    if (deliver) {
      steps.set('append: insert + NOTIFY, committed', appended.at - append.at);
      const wake = marks.find(
        (m) => m.step === 'wake' && m.pid === deliver.pid && m.at >= append.at && m.at <= deliver.at,
      );
      if (wake) {
        steps.set('NOTIFY heard on A (from the append)', wake.at - append.at);
        steps.set('read on A (the new events)', deliver.at - wake.at);
      }
    } else {
      steps.set("(append: not on the way, A's streams have it at once)", appended.at - append.at);
    }
    const handed = deliver ?? publish;
    const onA = marks.filter((m) => m.pid === handed.pid && m.at >= handed.at && m.at <= command.seen);
    steps.set("A's stream: the task loaded and stored again, then sent", command.seen - handed.at);
    steps.set('  of which loading', pairedTime(onA, 'load', 'loaded'));
    steps.set('  of which storing', pairedTime(onA, 'save', 'saved'));
    steps.set('answer to the client (from the post)', command.answered - post.at);
    steps.set("total: request to reply in A's stream", command.seen - command.sent);
    let route = routes.get(command.route);
    if (!route) routes.set(command.route, (route = new Map()));
    for (const [step, value] of steps) route.set(step, [...(route.get(step) ?? []), value]);
  }
  const lines: string[] = [];
  for (const [route, steps] of routes) {
    lines.push(`  ${route} (medians of ${steps.get("total: request to reply in A's stream")?.length ?? 0} commands)`);
    for (const [step, values] of steps)
      lines.push(`    ${step.padEnd(60)} ${ms(summarize(values).median)}   p90 ${ms(summarize(values).p90)}`);
  }
  return lines;
}
