import { CommandUsageError, type CommandDefinition } from '@tiny-harness/commands-extension';
import { REPLY_ERROR_KEY } from '../../wire.js';
import type { ScheduleControl, ScheduleRequest, ScheduleView } from './ports.js';

const USAGE =
  'Write /schedule <when> <prompt>, where <when> is a cron expression in quotes ("0 8 * * 1-5"), every 2h, or at 2026-12-24T17:00; add tz=Europe/Paris for a time zone, --new-context to run each time in a new conversation. /schedule hook <prompt> gives a URL whose POST runs it. /schedule alone lists your schedules.';

/**
 * `/schedule` (issue 39): `<when> <prompt>` runs the prompt on a schedule, each run a new task
 * in this conversation's context as its sender, with this task's model; alone, lists the
 * sender's schedules; `pause <id>` and `resume <id>`; `hook <prompt>` makes a hook, run by a
 * POST to the secret URL of the reply, and `hook rotate <id>` gives it a new one.
 */
export function scheduleCommand(schedules: ScheduleControl): CommandDefinition {
  return {
    name: 'schedule',
    description: 'Run a prompt on a schedule (cron, every 2h, at a time), or list your schedules',
    argumentHint: '[<when> <prompt> | hook <prompt> | hook rotate <id> | pause <id> | resume <id>]',
    handler: async ({ args, task, callContext, pushConfig }) => {
      const words = args.trim().split(/\s+/);
      if (!args.trim()) {
        const listed = await schedules.list(callContext);
        return { text: listText(listed), data: { schedules: listed } };
      }
      if ((words[0] === 'pause' || words[0] === 'resume') && words.length === 2) {
        const view = await schedules.setPaused(words[1]!, words[0] === 'pause', callContext);
        if (!view) return notFound(words[1]!);
        return { text: `${view.paused ? 'Paused' : 'Resumed'} ${describe(view)}`, data: { schedule: view } };
      }
      if (words[0] === 'hook') {
        if (words[1] === 'rotate' && words.length === 3) {
          const rotated = await schedules.rotateHook(words[2]!, callContext);
          if (!rotated) return notFound(words[2]!, 'hook');
          return {
            text: `New trigger URL of hook ${rotated.id}; the old one answers 404 from now on. ${hookText(rotated)}`,
            data: { schedule: rotated },
          };
        }
        const hook = { ...readHookRequest(args), ...(pushConfig && { pushConfig }) };
        const made = await schedules.createHook(task, hook, callContext);
        if ('refused' in made) return { text: made.refused, data: { [REPLY_ERROR_KEY]: made.code } };
        const where = made.newContext ? 'a new conversation' : "this conversation's context";
        return {
          text: `Made hook ${made.id}: "${preview(made.prompt)}". Each POST runs it as a new task in ${where}. ${hookText(made)} /unschedule ${made.id} removes it; /schedule pause ${made.id} pauses it.`,
          data: { schedule: made },
        };
      }
      const request = { ...readRequest(args), ...(pushConfig && { pushConfig }) };
      const outcome = await schedules.create(task, request, callContext);
      if ('refused' in outcome) return { text: outcome.refused, data: { [REPLY_ERROR_KEY]: outcome.code } };
      const where = outcome.newContext ? 'a new conversation' : "this conversation's context";
      return {
        text: `Scheduled ${describe(outcome)} Each run is a new task in ${where}. /unschedule ${outcome.id} removes it; /schedule pause ${outcome.id} pauses it.`,
        data: { schedule: outcome },
      };
    },
  };
}

/** `/unschedule <id>` (issue 39): removes one of the sender's schedules. */
export function unscheduleCommand(schedules: ScheduleControl): CommandDefinition {
  return {
    name: 'unschedule',
    description: 'Remove one of your schedules',
    argumentHint: '<id>',
    handler: async ({ args, callContext }) => {
      const id = args.trim();
      if (!id || /\s/.test(id))
        throw new CommandUsageError('Name the schedule to remove: /unschedule <id> (/schedule lists them).');
      if (!(await schedules.remove(id, callContext))) return notFound(id);
      return { text: `Removed schedule ${id}: it runs no more.`, data: { removed: id } };
    },
  };
}

/** Reads `[options] <when> [options] <prompt>`; the options are `--new-context` and `tz=<zone>`. */
export function readRequest(args: string): ScheduleRequest {
  let rest = args.trim();
  let newContext = false;
  let timeZone: string | undefined;
  const takeOptions = () => {
    for (let m; (m = /^(--new-context|tz=(\S+))(\s+|$)/.exec(rest)); rest = rest.slice(m[0].length)) {
      if (m[2]) timeZone = m[2];
      else newContext = true;
    }
  };
  takeOptions();
  let when: string;
  const quoted = /^(["'])(.*?)\1(\s+|$)/.exec(rest);
  const worded = /^((?:every|at)\s+\S+|@\w+)(\s+|$)/i.exec(rest);
  if (quoted) [when, rest] = [quoted[2]!.trim(), rest.slice(quoted[0].length)];
  else if (worded) [when, rest] = [worded[1]!, rest.slice(worded[0].length)];
  else throw new CommandUsageError(USAGE);
  takeOptions();
  const prompt = rest.trim();
  if (!prompt) throw new CommandUsageError(`Say what to run ${when}. ${USAGE}`);
  return { when, prompt, newContext, ...(timeZone && { timeZone }) };
}

/** Reads `hook [--new-context] <prompt>`. */
export function readHookRequest(args: string): { prompt: string; newContext: boolean } {
  let rest = args.trim().replace(/^hook(\s+|$)/, '');
  let newContext = false;
  for (let m; (m = /^--new-context(\s+|$)/.exec(rest)); rest = rest.slice(m[0].length)) newContext = true;
  const prompt = rest.trim();
  if (!prompt)
    throw new CommandUsageError(
      'Say what to run when the URL is POSTed: /schedule hook [--new-context] <prompt>. The body POSTed is added to the prompt.',
    );
  return { prompt, newContext };
}

/** The URL, said in this reply only: the schedules keep only its secret's hash. */
function hookText(view: ScheduleView): string {
  return `POST to ${view.url} (the body, text or JSON, is added to the prompt). Keep it secret: whoever has it runs the prompt as you; /schedule hook rotate ${view.id} replaces it.`;
}

function notFound(id: string, what = 'schedule') {
  return {
    text: `You have no ${what} ${id}: /schedule lists yours.`,
    data: { [REPLY_ERROR_KEY]: 'schedule_not_found' },
  };
}

function describe(view: ScheduleView): string {
  if (view.when === 'hook')
    return `${view.id} (hook): "${preview(view.prompt)}". ${view.paused ? 'It is paused.' : 'Runs on each POST to its trigger URL.'}`;
  const next =
    view.next.length === 0
      ? view.paused
        ? 'It is paused.'
        : 'No run is left.'
      : `Next run${view.next.length === 1 ? '' : 's'}: ${view.next.map((at) => localTime(at, view.timeZone)).join(', ')} (${view.timeZone}).`;
  const pushed = view.webhooks ? ` Its runs are pushed to the webhook given with /schedule.` : '';
  return `${view.id} (${view.when}): "${preview(view.prompt)}". ${next}${pushed}`;
}

function listText(views: ScheduleView[]): string {
  if (views.length === 0) return 'You have no schedules. /schedule <when> <prompt> makes one.';
  const lines = views.map((view) => {
    const last = view.lastRun
      ? ` Last run: ${localTime(view.lastRun.dueAt, view.timeZone)}, task ${view.lastRun.taskId ?? '-'}.`
      : '';
    const secret =
      view.when === 'hook'
        ? ` (Its URL is in the reply that made it; /schedule hook rotate ${view.id} gives a new one.)`
        : '';
    const skip = view.lastSkip
      ? ` Skipped: ${view.lastSkip.missed} run${view.lastSkip.missed === 1 ? '' : 's'} from ${localTime(view.lastSkip.dueAt, view.timeZone)} (the server was down past schedules.catchUpMs).`
      : '';
    return `- ${describe(view)}${last}${skip}${secret}`;
  });
  return `Your schedules:\n${lines.join('\n')}`;
}

function localTime(iso: string, timeZone: string): string {
  const format = new Intl.DateTimeFormat('sv-SE', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    hourCycle: 'h23',
  });
  return format.format(new Date(iso));
}

function preview(prompt: string): string {
  const line = prompt.split('\n', 1)[0]!;
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
