import type { Task } from '@a2a-js/sdk';
import { resolveUserScope, type ServerCallContext } from '@a2a-js/sdk/server';
import type { ModelChoice, ModelControl } from '../commands/index.js';
import type { ContextKey, TaskStateStore } from '../ports.js';

/** The models a task may use; the catalog in `models/` is one. */
export interface ModelOffer {
  list(): ModelChoice[];
  has(id: string): boolean;
  readonly defaultModel: string;
  /** Looks again for providers that were down (see `ModelCatalog.rediscover`). */
  rediscover?(): Promise<string[]>;
}

/**
 * Which model a task uses, as `/model` shows and sets it. A task's own
 * choice wins; a task without one uses the model its user last chose in its context (CMD-22,
 * CMD-35), and otherwise the default. Choices are stored, so they survive a restart (CMD-21).
 */
export class TaskModels implements ModelControl {
  constructor(
    private readonly offer: ModelOffer,
    private readonly state: TaskStateStore,
  ) {}

  /** `callContext` names the user; without one (no caller), the context's choice is not used. */
  async modelFor(task: Pick<Task, 'id' | 'contextId'>, callContext: ServerCallContext | undefined): Promise<string> {
    const context = callContext ? contextKey(task.contextId, callContext) : undefined;
    return (await this.state.getModelChoice(task.id, context)) ?? this.offer.defaultModel;
  }

  offered(): ModelChoice[] {
    return this.offer.list();
  }

  /** The task's model and the choices; a provider that was down is asked again first. */
  async describe(task: Task, callContext: ServerCallContext): Promise<{ current: string; choices: ModelChoice[] }> {
    await this.offer.rediscover?.();
    return { current: await this.modelFor(task, callContext), choices: this.offer.list() };
  }

  async choose(task: Task, modelId: string, callContext: ServerCallContext): Promise<boolean> {
    if (!this.offer.has(modelId)) await this.offer.rediscover?.();
    if (!this.offer.has(modelId)) return false;
    await this.state.setTaskModel(task.id, contextKey(task.contextId, callContext), modelId);
    return true;
  }
}

/** The caller's view of a context: their tenant and owner as the task store scopes them. */
export function contextKey(contextId: string, callContext: ServerCallContext): ContextKey {
  return { tenant: callContext.tenant ?? '', owner: resolveUserScope(callContext), contextId };
}
