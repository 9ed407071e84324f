import { randomUUID } from 'node:crypto';
import type { ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { resolveUserScope, type ServerCallContext } from '@a2a-js/sdk/server';
import { HarnessError } from '../errors.js';
import type { SqlPushStore, StoredPushConfig } from '../store/index.js';

/**
 * The push-notification configs of tasks, as A2A's four operations and `SendMessage`'s
 * `configuration.taskPushNotificationConfig` see them (docs/push.md). A config belongs to its
 * task's user: for anyone else the task is not found, and so are its configs. A webhook URL is
 * checked when its config is created (`checkUrl`: not on a private network unless allowed) and
 * again at each delivery.
 */
export interface PushConfigsOptions {
  records: Pick<SqlPushStore, 'put' | 'get' | 'list' | 'delete'>;
  /** Why a webhook URL is refused, or undefined. */
  checkUrl: (url: string) => Promise<string | undefined>;
  now?: () => number;
}

export class PushConfigs {
  private readonly now: () => number;

  constructor(private readonly options: PushConfigsOptions) {
    this.now = options.now ?? Date.now;
  }

  async create(params: TaskPushNotificationConfig, context: ServerCallContext): Promise<TaskPushNotificationConfig> {
    const config = await this.checked(params, requireId(params.taskId, 'taskId'));
    if (!(await this.options.records.put(scopeOf(context), config, this.now()))) throw taskNotFound(config.taskId);
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
      await this.options.records.put(scopeOf(context), { ...checked, taskId }, this.now(), !existing);
    };
  }

  async get(taskId: string, id: string, context: ServerCallContext, tenant = ''): Promise<TaskPushNotificationConfig> {
    const config = await this.options.records.get(scopeOf(context), requireId(taskId, 'taskId'), requireId(id, 'id'));
    if (!config) throw new HarnessError('task_not_found', `Push notification config not found: ${id} (task ${taskId})`);
    return toWire(config, tenant);
  }

  async list(
    taskId: string,
    context: ServerCallContext,
    tenant = '',
  ): Promise<ListTaskPushNotificationConfigsResponse> {
    const configs = await this.options.records.list(scopeOf(context), requireId(taskId, 'taskId'));
    return { configs: configs.map((config) => toWire(config, tenant)), nextPageToken: '' };
  }

  /** Deletes the config; one already gone (or never there) is no error. */
  async delete(taskId: string, id: string, context: ServerCallContext): Promise<void> {
    await this.options.records.delete(scopeOf(context), requireId(taskId, 'taskId'), requireId(id, 'id'));
  }

  /** The config as stored, its webhook URL checked; its fields' shape and size are the edge schema's (`server/edge-schema.ts`). */
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
