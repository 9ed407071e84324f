import type { StreamResponse, SubscribeToTaskRequest } from '@a2a-js/sdk';
import type { A2ARequestHandler, ServerCallContext } from '@a2a-js/sdk/server';
import { DelegatingRequestHandler } from '../a2a/index.js';
import { followTask, type FollowTarget } from './task-follower.js';

/**
 * `SubscribeToTask`, answered from the engine's buses rather than by the SDK. The SDK's
 * `resubscribe` sends an idle task and closes at once, so a subscriber would never see a later
 * command reply (CMD-8); this one attaches to the task's bus, creating it for an idle task, and
 * follows the task's events from other instances. And the SDK's keeps a subscriber that went
 * away listening until the task's next event; this one lets go at once (`task-follower.ts`).
 */
export class Subscriptions extends DelegatingRequestHandler {
  constructor(
    inner: A2ARequestHandler,
    private readonly target: FollowTarget,
  ) {
    super(inner);
  }

  override resubscribe(
    params: SubscribeToTaskRequest,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    return followTask(this.target, params.id, context, { follow: 'live', refuseEnded: true });
  }
}
