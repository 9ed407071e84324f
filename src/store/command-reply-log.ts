import { TaskStatusUpdateEvent } from '@a2a-js/sdk';
import type { Kysely } from 'kysely';
import type { CommandReplyLog } from '../commands/reply-log.js';
import type { Database } from './database.js';

/**
 * The durable `CommandReplyLog`: a command resent with the same `messageId` after a restart is
 * still answered from the log instead of run again (CMD-13). Replies are stored with the SDK's
 * codec, so the state enum and any raw bytes in the reply message read back as they were.
 */
export class SqlCommandReplyLog implements CommandReplyLog {
  constructor(private readonly db: Kysely<Database>) {}

  async get(taskId: string, messageId: string): Promise<TaskStatusUpdateEvent | undefined> {
    const row = await this.db
      .selectFrom('command_replies')
      .select('reply_json')
      .where('task_id', '=', taskId)
      .where('message_id', '=', messageId)
      .executeTakeFirst();
    return row ? TaskStatusUpdateEvent.fromJSON(JSON.parse(row.reply_json)) : undefined;
  }

  /** The first record wins: a second `put` for the same message changes nothing. */
  async put(taskId: string, messageId: string, reply: TaskStatusUpdateEvent): Promise<void> {
    await this.db
      .insertInto('command_replies')
      .values({ task_id: taskId, message_id: messageId, reply_json: JSON.stringify(TaskStatusUpdateEvent.toJSON(reply)) })
      .onConflict((oc) => oc.columns(['task_id', 'message_id']).doNothing())
      .execute();
  }
}
