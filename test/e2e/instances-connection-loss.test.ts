/**
 * Issue 22: a PostgreSQL connection reset must not kill a busy instance. Three `serve --database`
 * processes share a schema of their own under a load of turns, commands and subscriptions; then
 * every backend of theirs is ended (`pg_terminate_backend`), as a database restart, a failover,
 * a pooler restart or `idle_in_transaction_session_timeout` would. Every instance stays up, every
 * turn and subscription ends with a final state, nothing acknowledged is lost, and the next
 * requests are served on new connections. The instances' connections carry the schema's name as
 * `application_name`, so only they are ended, never those of tests running beside this one.
 *
 * Issue 33: a store failure is never the conversation's failure. No task ends (a turn cut by the
 * reset waits for the message again, never FAILED), and every task takes its next message.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import pg from 'pg';
import { TaskState, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { isTerminal } from '../../src/wire.js';
import { needs } from '../needs.js';
import { POSTGRES, TEST_DATABASE_URL_VARIABLE, type TempSchema } from '../support/postgres.js';
import { startCluster, type Cluster, type ServerProcess } from './process.js';
import { send, textOf } from './support.js';
import { waitFor, within } from '../support/wait.js';

/** Times the connections are ended, each under a fresh load. */
const ROUNDS = 3;
/** Held turns each instance runs when the connections are ended. */
const TURNS_PER_INSTANCE = 2;
/** Commands and messages sent to each instance in the moment the connections are ended. */
const BURST_PER_INSTANCE = 6;
/** Conversations sending one message after another while the connections are ended (issue 33: 16 clients). */
const CONVERSATIONS = 16;
/** Times the connections are ended under the conversations. */
const RESETS = 5;

/** How a turn may end here: waiting for the next message, whatever failed under it (issue 33). */
const FINAL_STATES = new Set([TaskState.TASK_STATE_INPUT_REQUIRED]);
/** The states no message can leave, as the tasks table stores them. */
const TERMINAL_STATES = Object.values(TaskState).filter(
  (state): state is TaskState => typeof state === 'number' && isTerminal(state),
);

describe(
  'instances on PostgreSQL whose database connections are all ended under load (issue 22)',
  needs(POSTGRES),
  () => {
    let cluster: Cluster;
    let schema: TempSchema;
    let admin: pg.Client;
    let instances: ServerProcess[] = [];
    let clients: Client[] = [];

    before(async () => {
      cluster = await startCluster({
        start: 'one by one',
        reply: 'one two three four five six seven eight',
        holdAfterChunks: 0,
        databaseUrl: (schema) => {
          const url = new URL(schema.url);
          url.searchParams.set('application_name', schema.schema);
          return url.toString();
        },
      });
      ({ schema, instances, clients } = cluster);
      admin = new pg.Client({ connectionString: process.env[TEST_DATABASE_URL_VARIABLE] });
      await admin.connect();
    });

    after(async () => {
      await admin?.end();
      await cluster?.close();
    });

    /** Ends every connection of this test's instances; resolves with how many there were. */
    async function endConnections(): Promise<number> {
      const { rows } = await admin.query<{ ended: boolean }>(
        'select pg_terminate_backend(pid) as ended from pg_stat_activity where application_name = $1',
        [schema.schema],
      );
      return rows.filter((row) => row.ended).length;
    }

    /** A streamed turn on `client` whose reply holds until `release()`. */
    async function heldTurn(client: Client) {
      const { taskId, messageId, stream, release } = await cluster.heldTurn(client);
      const streamed = { text: '' };
      return { taskId, messageId, ended: lastState(stream, streamed), streamed, release };
    }

    /** Subscribes on `client` to a task; resolves, once the subscription's first event came, with its last state. */
    async function follow(client: Client, taskId: string): Promise<{ ended: Promise<TaskState | undefined> }> {
      const stream = client.resubscribeTask({ tenant: '', id: taskId });
      await stream.next();
      return { ended: lastState(stream) };
    }

    /** The tasks of this test's schema in a state no message can leave. */
    async function endedTasks(): Promise<string[]> {
      const { rows } = await admin.query<{ id: string }>(
        `select id from ${schema.schema}.tasks where state = any($1::int[])`,
        [TERMINAL_STATES],
      );
      return rows.map((row) => row.id);
    }

    const alive = () => instances.filter((instance) => instance.child.exitCode === null && !instance.child.signalCode);

    it('every instance stays up, every turn and subscription ends, nothing acknowledged is lost, and the next requests are served', async (t) => {
      for (let round = 1; round <= ROUNDS; round++) {
        const turns = await Promise.all(
          clients.flatMap((client) => Array.from({ length: TURNS_PER_INSTANCE }, () => heldTurn(client))),
        );
        const followed = await Promise.all(
          turns.map((turn, i) => follow(clients[(i + 1) % clients.length]!, turn.taskId)),
        );
        const tasks = await Promise.all(clients.map((client) => send(client, 'Hello')));

        // The turns go on writing, and a burst of commands and messages arrives, as the connections end.
        for (const turn of turns) turn.release();
        const burst = clients.flatMap((client, i) =>
          Array.from({ length: BURST_PER_INSTANCE }, (_, j) => {
            const task = tasks[(i + j) % tasks.length]!;
            const text = j % 2 ? '/status' : `note ${round}.${i}.${j}`;
            const messageId = randomUUID();
            return send(client, text, { taskId: j % 3 === 2 ? undefined : task.id, messageId }).then((answer) => ({
              taskId: answer.id,
              messageId,
            }));
          }),
        );
        // Ended once the first of the burst is answered, while the rest and the turns are at work.
        await Promise.race(burst.map((answer) => answer.catch(() => undefined)));
        const ended = await endConnections();
        assert.ok(ended > 0, `round ${round}: some connections were ended`);

        const outcomes = await Promise.allSettled(burst);
        const failed = outcomes.filter((outcome) => outcome.status === 'rejected').length;
        t.diagnostic(`round ${round}: ${ended} connections ended; ${failed} of ${burst.length} requests failed`);
        const turnStates = await within(
          `round ${round}: the turns' streams end`,
          Promise.all(turns.map((turn) => turn.ended)),
        );
        const followedStates = await within(
          `round ${round}: the subscriptions end`,
          Promise.all(followed.map((subscription) => subscription.ended)),
        );
        assert.equal(alive().length, instances.length, `round ${round}: every instance is up`);
        for (const [i, state] of turnStates.entries()) {
          assert.ok(state !== undefined && FINAL_STATES.has(state), `round ${round}: turn ${i} ended in ${state}`);
          const stored = await clients[i % clients.length]!.getTask({ tenant: '', id: turns[i]!.taskId });
          assert.equal(stored.status?.state, state, `round ${round}: turn ${i} is stored as it ended`);
          // Issue 33: the reply its client saw streamed is kept, whether the turn finished or was cut short.
          assert.ok(
            textOf(stored.status?.message).startsWith(turns[i]!.streamed.text),
            `round ${round}: turn ${i} keeps what it streamed ("${turns[i]!.streamed.text}"): "${textOf(stored.status?.message)}"`,
          );
        }
        for (const [i, state] of followedStates.entries())
          assert.ok(
            state !== undefined && FINAL_STATES.has(state),
            `round ${round}: subscription ${i} ended in ${state}`,
          );

        // Acknowledged: the turns' messages, the first messages, and whatever of the burst was answered.
        const acknowledged = [
          ...turns.map((turn) => ({ taskId: turn.taskId, messageId: turn.messageId })),
          ...outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : [])),
        ];
        for (const [i, { taskId, messageId }] of acknowledged.entries()) {
          const stored = await clients[i % clients.length]!.getTask({ tenant: '', id: taskId });
          assert.ok(
            stored.history.some((message) => message.messageId === messageId),
            `round ${round}: acknowledged message ${messageId} of task ${taskId} is kept`,
          );
        }
        // New connections serve the next requests on every instance.
        for (const client of clients)
          assert.equal((await send(client, '/status')).status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);

        // Issue 33: no task has ended, and each takes its next message, on any instance.
        assert.deepEqual(await endedTasks(), [], `round ${round}: no task is in a terminal state`);
        const taskIds = [...new Set(acknowledged.map(({ taskId }) => taskId))];
        const answers = await Promise.all(
          taskIds.map((taskId, i) => send(clients[i % clients.length]!, `again ${round}`, { taskId })),
        );
        for (const [i, answer] of answers.entries())
          assert.equal(
            answer.status?.state,
            TaskState.TASK_STATE_INPUT_REQUIRED,
            `round ${round}: task ${taskIds[i]} took a later message`,
          );
      }
    });

    it('issue 33: conversations under way while the connections are ended again and again: none ends, each takes its next message', async (t) => {
      const tasks = await Promise.all(
        Array.from({ length: CONVERSATIONS }, (_, i) => send(clients[i % clients.length]!, 'Hello')),
      );
      const progress = new EventEmitter();
      let answered = 0;
      let refused = 0;
      let talking = true;
      // Each conversation sends its next message once the last is answered (or refused), round the instances.
      const talks = tasks.map(async (task, i) => {
        for (let sent = 0; talking; sent++) {
          await send(clients[(i + sent) % clients.length]!, `message ${sent}`, { taskId: task.id }).then(
            () => answered++,
            () => refused++,
          );
          progress.emit('answer');
        }
      });
      try {
        for (let reset = 1; reset <= RESETS; reset++) {
          // Ended while every conversation is at work: some turns start, some stream, some end.
          const target = answered + CONVERSATIONS;
          await waitFor(
            `reset ${reset}: the conversations answered again`,
            progress,
            'answer',
            () => answered >= target,
          );
          assert.ok((await endConnections()) > 0, `reset ${reset}: some connections were ended`);
        }
      } finally {
        talking = false;
        await Promise.all(talks);
      }
      t.diagnostic(`${answered} messages answered, ${refused} refused, across ${RESETS} resets`);
      assert.deepEqual(await endedTasks(), [], 'no task is in a terminal state');
      const again = await Promise.all(
        tasks.map((task, i) => send(clients[i % clients.length]!, 'and now?', { taskId: task.id })),
      );
      for (const [i, answer] of again.entries())
        assert.equal(answer.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, `conversation ${i} goes on`);
    });
  },
);

/**
 * The last state a stream told, once it ends; a stream cut by its instance's end tells what it
 * had. The text of its artifact updates is added to `streamed`, when given.
 */
async function lastState(
  stream: AsyncGenerator<StreamResponse, void, undefined>,
  streamed?: { text: string },
): Promise<TaskState | undefined> {
  let state: TaskState | undefined;
  try {
    for await (const event of stream) {
      const payload = event.payload;
      if (payload?.$case === 'artifactUpdate' && streamed)
        for (const part of payload.value.artifact?.parts ?? [])
          if (part.content?.$case === 'text') streamed.text += part.content.value;
      if (payload?.$case === 'statusUpdate') state = payload.value.status?.state;
      else if (payload?.$case === 'task') state = payload.value.status?.state;
    }
  } catch {
    // The stream was cut: what it told until then is the answer.
  }
  return state;
}
