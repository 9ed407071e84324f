/**
 * Starting one scheduled run (issue 39): a new task, through the engine like any turn, as the
 * schedule's user, in its context (or a new one), with its model; the push configs given with
 * `/schedule` (kept with the schedule) and those of the task `/schedule` was sent to, as they
 * stand now, are set on the run's task before anything of it is stored, so a webhook gets every
 * event with no client connected. A config in both (the one given with `/schedule` is set on that
 * task too) is set once.
 */
import { randomUUID } from 'node:crypto';
import { Role, type Message, type Part, type TaskPushNotificationConfig } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import { textPart } from '../../wire.js';
import type { TaskEngine } from '../engine.js';
import type { PushConfigs } from '../push-configs.js';
import type { HookInput, ScheduleRun, StoredSchedule } from '../../schedule-ports.js';

/** Metadata key on a scheduled run's message: `{ scheduleId, dueAt }` (ISO 8601), and `hook: true` for a hook's run. */
export const SCHEDULE_KEY = 'tiny-harness/schedule';

export interface ScheduleRunsOptions {
  engine: Pick<TaskEngine, 'startTurn'>;
  /** Makes `model` the new task's model (before its first write). */
  setModel(taskId: string, model: string): Promise<void>;
  /** Where the origin task's push configs are read and the run's set; none: no push. */
  push?: Pick<PushConfigs, 'list' | 'forTurn'>;
  /** Told when the origin's push configs could not be copied (the run goes on without them). */
  onError(error: unknown, what: string, taskId?: string): void;
}

/** A run begun: its task's id, and when its turn has ended (never rejects). */
export interface StartedRun {
  taskId: string;
  done: Promise<void>;
  context: ServerCallContext;
}

export class ScheduleRuns {
  constructor(private readonly options: ScheduleRunsOptions) {}

  /** Starts the claimed run's turn under the claim's task id; throws what `startTurn` throws (`turns_at_limit` among them). */
  async start(schedule: StoredSchedule, claim: ScheduleRun): Promise<StartedRun> {
    const { engine, setModel } = this.options;
    const context = new ServerCallContext({
      tenant: schedule.tenant,
      user: { isAuthenticated: schedule.authenticated, userName: schedule.owner },
    });
    const message: Message = {
      messageId: randomUUID(),
      taskId: '',
      contextId: schedule.newContext ? randomUUID() : schedule.contextId,
      role: Role.ROLE_USER,
      parts: [textPart(schedule.prompt), ...inputParts(claim.input)],
      metadata: {
        [SCHEDULE_KEY]: {
          scheduleId: schedule.id,
          dueAt: new Date(claim.dueMs).toISOString(),
          ...(schedule.kind === 'hook' && { hook: true }),
        },
      },
      extensions: [],
      referenceTaskIds: [],
    };
    const pushHooks = await this.pushHooks(schedule, context);
    const turn = await engine.startTurn(message, context, {
      newTaskId: claim.taskId,
      beforeTurn: async (taskId) => {
        await setModel(taskId, schedule.model);
        for (const hook of pushHooks) await hook(taskId);
      },
    });
    // Nobody reads the run's stream here: its clients follow the task, its webhooks get it pushed.
    turn.detach();
    return { taskId: turn.taskId, done: turn.done, context };
  }

  /** The schedule's push configs and the origin task's, each ready to be set on the run's task. */
  private async pushHooks(
    schedule: StoredSchedule,
    context: ServerCallContext,
  ): Promise<Array<(taskId: string) => Promise<void>>> {
    const { push, onError } = this.options;
    if (!push) return [];
    try {
      const { configs } = await push.list(schedule.originTaskId, context);
      const own = schedule.pushConfigs.map((config): TaskPushNotificationConfig => ({
        ...config,
        tenant: '',
        taskId: '',
        authentication: config.authentication,
      }));
      const seen = new Set<string>();
      const unique = [...own, ...configs].filter((config) => {
        const key = sameWebhook(config);
        return !seen.has(key) && Boolean(seen.add(key));
      });
      return await Promise.all(
        unique.map((config: TaskPushNotificationConfig) => push.forTurn({ ...config, taskId: '' }, context, false)),
      );
    } catch (error) {
      onError(error, "copying a schedule's push configs to its run", schedule.originTaskId);
      return [];
    }
  }
}

/** A hook's body after the prompt: a text part for text, a data part for JSON (the model reads it as JSON text). */
function inputParts(input: HookInput | undefined): Part[] {
  if (input === undefined) return [];
  if ('text' in input) return [textPart(input.text)];
  return [{ content: { $case: 'data', value: input.data }, mediaType: 'application/json', filename: '', metadata: {} }];
}

/** What makes two configs deliver the same thing: where, and with what token and credentials. */
function sameWebhook(config: TaskPushNotificationConfig): string {
  const auth = config.authentication;
  return JSON.stringify([config.url, config.token ?? '', auth?.scheme ?? '', auth?.credentials ?? '']);
}
