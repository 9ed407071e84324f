import type { LogSubscription } from '../ports.js';

/**
 * The log readers of clients' streams that follow a task without running its turn:
 * `SubscribeToTask`, a queued message's stream, a resend following its turn. A drain closes
 * them, so that each stream ends cleanly and its client resumes on another instance
 * (`Last-Event-ID`, spec/stream-resume-extension-v1.md): at once those on a task whose turn
 * does not run here, the rest once the turns here have ended. A turn's own stream ends at its
 * final status, and is not one of them.
 */
export class ClientStreams {
  private readonly open = new Map<LogSubscription, string>();
  /** Set by `closeAll`: which tasks' readers close as soon as they begin. */
  private closing: ((taskId: string) => boolean) | undefined;

  constructor(private readonly feeds: { follow(taskId: string, known?: number): Promise<LogSubscription> }) {}

  /** `TaskFeeds.follow`, for a client's stream: once the instance drains, a reader closes as `closeAll` says. */
  async follow(taskId: string, known?: number): Promise<LogSubscription> {
    const subscription = await this.feeds.follow(taskId, known);
    if (this.closing?.(taskId)) {
      subscription.close();
      return subscription;
    }
    this.open.set(subscription, taskId);
    subscription.onClosed(() => this.open.delete(subscription));
    return subscription;
  }

  /** Closes every reader whose task `which` names (all when none is given), and those that begin from now on. */
  closeAll(which: (taskId: string) => boolean = () => true): void {
    this.closing = which;
    for (const [subscription, taskId] of this.open) if (which(taskId)) subscription.close();
  }
}
