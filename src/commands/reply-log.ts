import type { TaskStatusUpdateEvent } from '@a2a-js/sdk';

/**
 * Remembers the reply given to each command message, so that a command resent with the same
 * `messageId` on the same task is answered again instead of run again (CMD-13: a retried
 * command that starts a sub-task must not start two).
 */
export interface CommandReplyLog {
  /** The reply recorded for this message on this task, if it was already handled. */
  get(taskId: string, messageId: string): Promise<TaskStatusUpdateEvent | undefined>;
  /** Records the reply; a second record for the same message keeps the first. */
  put(taskId: string, messageId: string, reply: TaskStatusUpdateEvent): Promise<void>;
}

/** A reply log that lives only as long as the process: for tests and embedding without a store. */
export class InMemoryCommandReplyLog implements CommandReplyLog {
  private readonly replies = new Map<string, TaskStatusUpdateEvent>();

  async get(taskId: string, messageId: string): Promise<TaskStatusUpdateEvent | undefined> {
    const reply = this.replies.get(`${taskId}\0${messageId}`);
    return reply ? structuredClone(reply) : undefined;
  }

  async put(taskId: string, messageId: string, reply: TaskStatusUpdateEvent): Promise<void> {
    const key = `${taskId}\0${messageId}`;
    if (!this.replies.has(key)) this.replies.set(key, structuredClone(reply));
  }
}
