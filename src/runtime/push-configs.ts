import { randomUUID } from 'node:crypto';
import type { ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { resolveUserScope, type ServerCallContext } from '@a2a-js/sdk/server';
import { HarnessError } from '../errors.js';
import type { ConfigCursor, PushConfigBounds, PushConfigRecords, PutOutcome, StoredPushConfig } from '../ports.js';

/**
 * The push-notification configs of tasks, as A2A's four operations and `SendMessage`'s
 * `configuration.taskPushNotificationConfig` see them (docs/push.md). A config belongs to its
 * task's user: for anyone else the task is not found, and so are its configs. A webhook URL is
 * checked when its config is created (`checkUrl`: not on a private network unless allowed) and
 * again at each delivery. The sizes of a config's fields are bounded at the edge
 * (`server/edge-schema.ts`), the number of configs here (`bounds`), and the list is paged.
 */
export interface PushConfigsOptions {
  records: PushConfigRecords;
  /** Why a webhook URL is refused, or undefined. */
  checkUrl: (url: string) => Promise<string | undefined>;
  /** The most configs a task may have (`push.maxConfigsPerTask`), and a user (`push.maxConfigsPerUser`). */
  bounds: PushConfigBounds;
  now?: () => number;
}

export class PushConfigs {
  private readonly now: () => number;

  constructor(private readonly options: PushConfigsOptions) {
    this.now = options.now ?? Date.now;
  }

  async create(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    const config = await this.checked(params, requireId(params.taskId, 'taskId'));
    this.stored(await this.options.records.put(scopeOf(context), config, this.now(), this.options.bounds), config);
    return toWire(config, params.tenant);
  }

  /**
   * `SendMessage`'s config, checked now; the hook the engine calls with the turn's task id
   * (`TurnOptions.beforeTurn`), before anything of the turn is stored, so that every event of
   * the turn is delivered. `existing`: the message names a task (the engine checks it is the caller's).
   */
  async forTurn(
    params: TaskPushNotificationConfig,
    context: ServerCallContext,
    existing: boolean,
  ): Promise<(taskId: string) => Promise<void>> {
    const checked = await this.checked(params, params.taskId || '');
    return async (taskId) => {
      if (checked.taskId && checked.taskId !== taskId)
        throw new HarnessError(
          'params_invalid',
          'taskPushNotificationConfig.taskId must be empty or the task of the message.',
        );
      const config = { ...checked, taskId };
      const { bounds } = this.options;
      this.stored(await this.options.records.put(scopeOf(context), config, this.now(), bounds, !existing), config);
    };
  }

  /**
   * A config checked as `create` and `forTurn` check it (its URL, its fields), for no task yet:
   * what `/schedule` keeps for its runs. Throws `params_invalid` when refused.
   */
  async check(params: TaskPushNotificationConfig): Promise<Omit<StoredPushConfig, 'taskId'>> {
    const { taskId: _none, ...config } = await this.checked(params, '');
    return config;
  }

  async get(taskId: string, id: string, context: ServerCallContext, tenant = ''): Promise<TaskPushNotificationConfig> {
    const config = await this.options.records.get(scopeOf(context), requireId(taskId, 'taskId'), requireId(id, 'id'));
    if (!config) throw new HarnessError('task_not_found', `Push notification config not found: ${id} (task ${taskId})`);
    return toWire(config, tenant);
  }

  /**
   * A page of the task's configs, in the order they were made (ListTaskPushNotificationConfigs):
   * `pageSize` of them (0 or unset: {@link PUSH_LIST_PAGE_SIZE}, which is also the most), from
   * the page `pageToken` names; `nextPageToken` names the next page, empty after the last.
   */
  async list(
    taskId: string,
    context: ServerCallContext,
    page: { tenant?: string; pageSize?: number; pageToken?: string } = {},
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const limit = Math.min(page.pageSize || PUSH_LIST_PAGE_SIZE, PUSH_LIST_PAGE_SIZE);
    const after = page.pageToken ? fromPageToken(page.pageToken) : undefined;
    const listed = await this.options.records.list(scopeOf(context), requireId(taskId, 'taskId'), { limit, after });
    return {
      configs: listed.configs.map((config) => toWire(config, page.tenant ?? '')),
      nextPageToken: listed.next ? toPageToken(listed.next) : '',
    };
  }

  /** Deletes the config; one already gone (or never there) is no error. */
  async delete(taskId: string, id: string, context: ServerCallContext): Promise<void> {
    await this.options.records.delete(scopeOf(context), requireId(taskId, 'taskId'), requireId(id, 'id'));
  }

  /** Throws what a refused `put` means for the caller. */
  private stored(outcome: PutOutcome, config: StoredPushConfig): void {
    const { perTask, perUser } = this.options.bounds;
    if (outcome === 'no_task') throw taskNotFound(config.taskId);
    if (outcome === 'task_full')
      throw new HarnessError(
        'push_configs_full',
        `Task ${config.taskId} has ${perTask} push-notification configs, as many as a task may (push.maxConfigsPerTask). Delete one first, or replace one by creating it with its id.`,
      );
    if (outcome === 'user_full')
      throw new HarnessError(
        'push_configs_full',
        `You have ${perUser} push-notification configs over your tasks, as many as a user may (push.maxConfigsPerUser). Delete some first.`,
      );
  }

  // Field sizes are the edge schema's (server/edge-schema.ts), for every transport.
  private async checked(params: TaskPushNotificationConfig, taskId: string): Promise<StoredPushConfig> {
    if (!params.url) throw new HarnessError('params_invalid', 'taskPushNotificationConfig.url is required.');
    const refused = await this.options.checkUrl(params.url);
    if (refused) throw new HarnessError('params_invalid', `taskPushNotificationConfig.${refused}.`);
    const auth = params.authentication;
    return {
      taskId,
      id: params.id || randomUUID(),
      url: params.url,
      token: params.token ?? '',
      ...(auth?.scheme ? { authentication: { scheme: auth.scheme, credentials: auth.credentials ?? '' } } : {}),
    };
  }
}

/** The most configs one page of ListTaskPushNotificationConfigs holds, and the size of one unasked. */
export const PUSH_LIST_PAGE_SIZE = 100;

/** A page token: where the page before ended, opaque to the client. */
function toPageToken(cursor: ConfigCursor): string {
  return Buffer.from(JSON.stringify([cursor.createdMs, cursor.id])).toString('base64url');
}

function fromPageToken(token: string): ConfigCursor {
  try {
    const [createdMs, id] = JSON.parse(Buffer.from(token, 'base64url').toString('utf8')) as unknown[];
    if (Number.isSafeInteger(createdMs) && typeof id === 'string') return { createdMs: createdMs as number, id };
  } catch {
    // Not one of ours: refused below.
  }
  throw new HarnessError(
    'params_invalid',
    'pageToken is not one this server gave: send the nextPageToken of the previous page, or none for the first.',
  );
}

function scopeOf(context: ServerCallContext): { tenant: string; owner: string } {
  return { tenant: context.tenant ?? '', owner: resolveUserScope(context) };
}

function requireId(value: string | undefined, name: string): string {
  if (!value?.trim()) throw new HarnessError('params_invalid', `${name} is required.`);
  return value;
}

function taskNotFound(taskId: string): HarnessError {
  return new HarnessError('task_not_found', `Task not found: ${taskId}`);
}

function toWire(config: StoredPushConfig, tenant: string): TaskPushNotificationConfig {
  return {
    tenant,
    id: config.id,
    taskId: config.taskId,
    url: config.url,
    token: config.token,
    authentication: config.authentication,
  };
}
