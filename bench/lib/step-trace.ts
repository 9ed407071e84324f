/**
 * Where a command reply's time goes on its way from one instance to another's stream, step by
 * step, for bench/cross-instance.ts `--steps` (a CPU profile shows CPU, not the waits between
 * processes, which is most of this). In each harness child started while BENCH_STEP_TRACE=<dir>
 * is set, `installStepTrace` wraps a few methods of the engine, the store, the task feeds and
 * the coordination and records when each runs, with the command reply's message id where there
 * is one; the marks go to <dir>/<pid>.steps at exit. `stepBreakdown` joins them with the
 * client's own marks. Times are wall-clock milliseconds (`performance.timeOrigin +
 * performance.now()`), the same clock in every process of this machine.
 *
 * It wraps methods by name, private ones among them (`TaskEngine.post`, `TaskImages.write`,
 * `TaskFeeds.handOut`, `PostgresCoordination.wake`, `SqlTaskStore.read`): a diagnostic, not an
 * interface; it fails loudly when one is gone. A reply's id is known only once it is stored
 * (a command's reply is decided under the task's lock), so the post's and the write's marks are
 * recorded when they end, with the times they began.
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

/** The message ids of logged events (`LoggedEvent[]`), those that carry one. */
function idsOf(logged: unknown): string {
  return ((logged as { event: unknown }[] | undefined) ?? []).map(({ event }) => messageIdOf(event) || '-').join(',');
}

function wrap(prototype: object, name: string, around: (original: Method) => Method): void {
  const original = (prototype as Record<string, unknown>)[name];
  if (typeof original !== 'function') throw new Error(`step trace: no method ${name} to wrap (renamed?)`);
  (prototype as Record<string, unknown>)[name] = around(original as Method);
}

/** Records this process's steps until it exits, then writes them to `<dir>/<pid>.steps`. */
export async function installStepTrace(dir: string): Promise<void> {
  const marks: string[] = [];
  const mark = (step: string, id: string, time = at()) => marks.push(`${step} ${time.toFixed(3)} ${id}`);
  process.on('exit', () => appendFileSync(join(dir, `${process.pid}.steps`), marks.join('\n') + '\n'));

  const { TaskEngine } = await import('../../src/runtime/engine.js');
  const { TaskImages } = await import('../../src/store/task-images.js');
  const { TaskFeeds } = await import('../../src/store/task-feeds.js');
  const { PostgresCoordination } = await import('../../src/coordination/postgres-coordination.js');
  const { SqlTaskStore } = await import('../../src/store/task-store.js');

  // A reply or note stored from outside a turn: marked with the reply's id, read off the task stored.
  wrap(
    TaskEngine.prototype,
    'post',
    (original) =>
      async function (this: unknown, ...args: unknown[]) {
        const start = at();
        const task = (await original.apply(this, args)) as { status?: { message?: { messageId?: string } } };
        mark('post', task?.status?.message?.messageId ?? '', start);
        return task;
      },
  );
  // Every write of a task: its lock, its transaction (the task row and the log rows), the commit.
  wrap(
    TaskImages.prototype,
    'commit',
    (original) =>
      async function (this: unknown, ...args: unknown[]) {
        const start = at();
        const written = (await original.apply(this, args)) as { logged?: unknown };
        const ids = idsOf(written?.logged);
        mark('append', ids, start);
        mark('appended', ids);
        return written;
      },
  );
  // Events handed to the readers of a task here: at the commit of a write here, or read from the log.
  wrap(
    TaskFeeds.prototype,
    'handOut',
    (original) =>
      function (this: unknown, ...args: unknown[]) {
        const ids = idsOf(args[1]);
        if (ids.replace(/[-,]/g, '')) mark('deliver', ids);
        return original.apply(this, args);
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
    SqlTaskStore.prototype,
    'read',
    (original) =>
      async function (this: unknown, ...args: unknown[]) {
        mark('read', '');
        try {
          return await original.apply(this, args);
        } finally {
          mark('readDone', '');
        }
      },
  );
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
 * turn's lease checked), the reply's write (under the task's lock and row lock: the task row and
 * its log row, committed), then on the other instance the NOTIFY heard and the log read, or on
 * the same one the hand-over at the commit, and A's stream (the event handed to its reader until
 * the client sees it).
 */
export function stepBreakdown(dir: string, commands: ClientMarks[]): string[] {
  const marks = readMarks(dir);
  const first = (step: string, id: string, pid?: string, after = 0) =>
    marks.find((m) => m.step === step && m.ids.includes(id) && (!pid || m.pid === pid) && m.at >= after);
  const routes = new Map<string, Map<string, number[]>>();
  for (const command of commands) {
    const post = first('post', command.replyId);
    const append = post && first('append', command.replyId, post.pid);
    const appended = post && first('appended', command.replyId, post.pid);
    if (!post || !append || !appended) continue;
    const reads = marks.filter((m) => m.pid === post.pid && m.at >= command.sent && m.at <= post.at);
    const steps = new Map<string, number>([
      ['request to post (the task read, the lease checked)', post.at - command.sent],
      ['  of which the task read', pairedTime(reads, 'read', 'readDone')],
      ['post to its write', append.at - post.at],
      ['the write: locks, task row + log row, committed', appended.at - append.at],
    ]);
    // A reader here has it at the commit; otherwise another instance's reads it from the log.
    const here = first('deliver', command.replyId, post.pid, append.at);
    const elsewhere = here
      ? undefined
      : marks.find(
          (m) => m.step === 'deliver' && m.ids.includes(command.replyId) && m.pid !== post.pid && m.at >= append.at,
        );
    const deliver = here ?? elsewhere;
    if (!deliver) continue;
    if (elsewhere) {
      const wake = marks.find(
        (m) => m.step === 'wake' && m.pid === elsewhere.pid && m.at >= appended.at && m.at <= elsewhere.at,
      );
      if (wake) {
        steps.set('NOTIFY heard on A (from the commit)', wake.at - appended.at);
        steps.set('read on A (the new events, handed to the reader)', elsewhere.at - wake.at);
      } else steps.set('commit to the reader on A (no wake-up seen)', elsewhere.at - appended.at);
    } else {
      steps.set('handed to the reader here at the commit', deliver.at - append.at);
    }
    const onA = marks.filter((m) => m.pid === deliver.pid && m.at >= deliver.at && m.at <= command.seen);
    steps.set("A's stream: from the reader to the client", command.seen - deliver.at);
    steps.set('  of which task reads on A', pairedTime(onA, 'read', 'readDone'));
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
