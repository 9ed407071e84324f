/**
 * Faults: the server killed with SIGKILL in the middle of streamed turns and command replies,
 * and a model server that hangs, closes mid-stream or answers garbage.
 *
 * The kill tests run the real command line in a child process (test/e2e/process.ts) on one
 * data dir, against a fixture model that streams a long reply slowly, and keep a ledger of
 * everything the server acknowledged: a task whose id a client received, a command whose
 * SendMessage returned. After each kill the database file is checked read-only
 * (`PRAGMA integrity_check`), the server is started again on the same data dir, and every
 * acknowledged thing must be there, exactly once, with no task left SUBMITTED or WORKING;
 * the restarted server must then serve turns and commands on all of them.
 *
 * The model-failure tests run the harness in-process with `modelTimeoutMs: 1000`; what is served
 * while a model request hangs is checked on a harness whose timeout is far away, so that the
 * hanging turn surely runs all along. No test here asserts how long anything took: each waits
 * for the event it needs, and a generous bound only turns a hang into a clear failure.
 */
import { after, before, describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { TaskState, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { parseConfig } from '../../src/config/load.js';
import { startHarness, type RunningHarness } from '../../src/harness.js';
import { createLogger } from '../../src/log.js';
import { INTERRUPTED_TEXT } from '../../src/runtime/turn/turn-end.js';
import { startServerProcess, writeFixtureConfig, type ServerProcess } from '../e2e/process.js';
import { collect, createClient, send, startTestHarness, textOf, type TestHarness, sendStream } from '../e2e/support.js';
import { startModelServer, type Failure, type RunningModelServer } from '../fixtures/model-server.js';
import {
  artifactText,
  assertNoLeak,
  checkDatabaseFile,
  errorText,
  historyCounts,
  lastUserText,
  messageText,
  newStreamRecord,
  percentile,
  recordEvent,
  type StreamRecord,
} from './support.js';
import { waitFor, within } from '../support/wait.js';

const { TASK_STATE_SUBMITTED, TASK_STATE_WORKING, TASK_STATE_INPUT_REQUIRED } = TaskState;

describe('kill -9 during streamed turns and command replies', () => {
  // A long turn streams LONG_HELD_AFTER chunks, then the fixture holds the rest for ever: it can
  // only end by the kill, however slow the machine.
  const LONG = Array.from({ length: 600 }, (_, i) => `w${i}`).join(' ');
  const LONG_HELD_AFTER = 200;
  const forever = new Promise<never>(() => {});
  const CHUNK_DELAY_MS = 15;
  const SHORT = 'short answer';
  const COMMANDS = ['/status', '/model fixture:large', '/help model', '/model fixture:small', '/model'];

  let model: RunningModelServer;
  let dir: string;
  let configFile: string;
  const running: ServerProcess[] = [];

  /** What the server acknowledged, across every round. */
  const ledger = {
    tasks: new Set<string>(),
    // `sentTo`: the task the command was sent to, as sent (none when it started its task): a resend
    // must say the same to be one (CMD-34).
    replies: [] as { taskId: string; sentTo: string | undefined; commandId: string; replyId: string; text: string }[],
    /** Sub-tasks started by an acknowledged /spawn, with their parents. */
    subtasks: [] as { id: string; parent: string }[],
  };

  async function start(): Promise<ServerProcess> {
    const server = await startServerProcess(['--data-dir', join(dir, 'data'), '--config', configFile]);
    running.push(server);
    return server;
  }

  const databaseFile = () => join(dir, 'data', 'tiny-harness.db');

  before(async () => {
    model = await startModelServer({
      reply: (body) => (lastUserText(body).includes('long story') ? LONG : SHORT),
      chunkDelayMs: CHUNK_DELAY_MS,
      hold: (body) =>
        lastUserText(body).includes('long story') ? { afterChunks: LONG_HELD_AFTER, until: forever } : undefined,
    });
    dir = mkdtempSync(join(tmpdir(), 'tiny-harness-faults-'));
    configFile = writeFixtureConfig(dir, model.baseURL);
  });

  after(async () => {
    await Promise.all(running.map((server) => server.stop('SIGKILL')));
    await model?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  interface RoundPlan {
    /** Streamed turns on new tasks. */
    freshTurns: number;
    /** Streamed turns continuing these tasks. */
    continuedTurns: string[];
    /** Idle tasks created by a command first. */
    commandTasks: number;
    /** Workers firing commands at the round's tasks until the kill. */
    workers: number;
    /** How many command replies the round acknowledges, once every turn streams (3 chunks or more), before the kill. */
    killAfterReplies: number;
    /** `/spawn` of a long sub-task on this many of the round's idle tasks, just before the commands start. */
    spawns?: number;
  }

  interface RoundResult {
    turns: StreamRecord[];
    replies: number;
    killedAfterMs: number;
    /** Commands on a known task whose SendMessage failed because of the kill: a client would retry them. */
    cutCommands: { taskId: string; commandId: string; text: string }[];
    /** Command latency before the kill, ms. */
    commandP50: number;
    commandMax: number;
  }

  /** Loads a round on `server`, kills it with SIGKILL mid-way, and returns what the clients saw. */
  async function crashRound(server: ServerProcess, plan: RoundPlan): Promise<RoundResult> {
    const client = await createClient(server.url, 'JSONRPC');
    let killed = false;
    const unexpected: string[] = [];
    const background: Promise<unknown>[] = [];
    const turns: StreamRecord[] = [];
    const repliesBefore = ledger.replies.length;
    const latencies: number[] = [];
    const cutCommands: RoundResult['cutCommands'] = [];
    /** Emits `change` on every command reply and stream event received. */
    const progress = new EventEmitter();
    const report = (what: string) => (error: unknown) => {
      if (!killed) unexpected.push(`${what}: ${errorText(error)}`);
    };

    const command = async (text: string, taskId?: string) => {
      const commandId = randomUUID();
      const sent = Date.now();
      let task: Task;
      try {
        task = await send(client, text, { taskId, messageId: commandId });
      } catch (error) {
        if (killed && taskId) cutCommands.push({ taskId, commandId, text });
        throw error;
      }
      latencies.push(Date.now() - sent);
      const reply = task.status?.message;
      if (typeof reply?.metadata?.command !== 'string') throw new Error(`not a command reply: ${messageText(reply)}`);
      ledger.tasks.add(task.id);
      ledger.replies.push({ taskId: task.id, sentTo: taskId, commandId, replyId: reply.messageId, text });
      progress.emit('change');
      return task;
    };

    const startTurn = async (taskId?: string) => {
      const stream = sendStream(client, 'tell me a long story', { taskId });
      const first = await within('the first event of a turn', stream.next());
      const payload = (first.value as StreamResponse | undefined)?.payload;
      assert.equal(payload?.$case, 'task', 'a turn starts with its task');
      const id = (payload!.value as Task).id;
      ledger.tasks.add(id);
      const record = newStreamRecord(id);
      turns.push(record);
      background.push(
        (async () => {
          for await (const event of stream) {
            const problem = recordEvent(record, event);
            if (problem) unexpected.push(problem);
            progress.emit('change');
          }
        })().catch(report(`the stream of ${id}`)),
      );
    };

    // Whatever happens, the command loops stop with the round.
    let streamingSince = 0;
    try {
      const idle: string[] = [];
      for (let i = 0; i < plan.commandTasks; i++) idle.push((await command('/model fixture:small')).id);
      await Promise.all([
        ...Array.from({ length: plan.freshTurns }, () => startTurn()),
        ...plan.continuedTurns.map((id) => startTurn(id)),
      ]);
      for (const parent of idle.slice(0, plan.spawns ?? 0)) {
        const reply = (await command('/spawn tell me a long story', parent)).status?.message;
        ledger.subtasks.push({ id: String(reply?.metadata?.task_ref), parent });
      }

      const targets = [...ledger.tasks];
      for (let w = 0; w < plan.workers; w++) {
        background.push(
          (async () => {
            for (let i = 0; !killed; i++) {
              const taskId = targets[(w + i * plan.workers) % targets.length]!;
              await command(COMMANDS[(w + i) % COMMANDS.length]!, taskId).catch(report(`a command on ${taskId}`));
            }
          })(),
        );
      }
      // Commands creating tasks of their own, acknowledged only when they return.
      background.push(
        (async () => {
          while (!killed) {
            await command('/status').catch(report('a command on a new task'));
            await delay(10); // paced, so the commands share the machine with the turns
          }
        })(),
      );

      streamingSince = Date.now();
      await waitFor('every turn streaming', progress, 'change', () => turns.every((t) => t.chunks >= 3));
      const enough = ledger.replies.length + plan.killAfterReplies;
      await waitFor(
        `${plan.killAfterReplies} more command replies`,
        progress,
        'change',
        () => ledger.replies.length >= enough,
      );
      killed = true;
      assert.equal(await server.stop('SIGKILL'), null, 'killed by the signal');
    } finally {
      killed = true;
    }
    const killedAfterMs = Date.now() - streamingSince;
    await within('the clients noticing the kill', Promise.allSettled(background));

    assert.deepEqual(unexpected, [], 'nothing failed before the kill');
    const seen = turns.map(
      (t) =>
        `${t.taskId}: ${t.chunks} chunks, ${t.finals.map((f) => `${TaskState[f.state]} "${f.text.slice(0, 60)}"`).join(' ') || 'no final'}`,
    );
    assert.ok(
      turns.some((t) => t.finals.length === 0),
      `the kill came in the middle of a turn:\n${seen.join('\n')}`,
    );
    return {
      turns,
      replies: ledger.replies.length - repliesBefore,
      killedAfterMs,
      cutCommands,
      commandP50: percentile(latencies, 50),
      commandMax: percentile(latencies, 100),
    };
  }

  /** The store right after a kill: intact, with the killed turns still WORKING in it. */
  function checkAfterKill(t: TestContext): void {
    const check = checkDatabaseFile(databaseFile());
    assert.deepEqual(check.integrity, ['ok'], 'PRAGMA integrity_check');
    assert.equal(check.foreignKeyProblems, 0, 'PRAGMA foreign_key_check');
    assert.ok(check.tasksInFlight > 0, 'the kill left turns in flight in the store');
    t.diagnostic(`after the kill: integrity ok, ${check.tasksInFlight} tasks in flight in the file`);
  }

  /** Everything acknowledged is there once, nothing is in flight, and the server serves on. */
  async function checkAfterRestart(server: ServerProcess, round: RoundResult): Promise<void> {
    const client = await createClient(server.url, 'JSONRPC');
    for (const status of [TASK_STATE_SUBMITTED, TASK_STATE_WORKING]) {
      const listed = await client.listTasks({
        tenant: '',
        contextId: '',
        status,
        pageSize: 100,
        pageToken: '',
        historyLength: 0,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      });
      assert.deepEqual(
        listed.tasks.map((task) => task.id),
        [],
        `no task left ${TaskState[status]}`,
      );
    }
    const tasks = new Map<string, Task>();
    for (const id of ledger.tasks) tasks.set(id, await client.getTask({ tenant: '', id, historyLength: undefined }));
    for (const [id, task] of tasks)
      assert.equal(task.status?.state, TASK_STATE_INPUT_REQUIRED, `task ${id} waits for input`);
    for (const turn of round.turns) {
      const task = tasks.get(turn.taskId)!;
      assert.equal(turn.appendFlags[0], false, 'the first chunk starts the artifact');
      assert.ok(turn.appendFlags.slice(1).every(Boolean), 'later chunks append');
      assert.ok(LONG.startsWith(turn.text), `the stream of ${turn.taskId} was in order, each chunk once`);
      const stored = artifactText(task.artifacts.find((a) => a.artifactId === turn.artifactId));
      assert.ok(
        stored.startsWith(turn.text),
        `every chunk streamed was stored first (${turn.text.length} streamed, ${stored.length} stored)`,
      );
      assert.ok(LONG.startsWith(stored), 'the stored artifact is a prefix of the reply');
      if (turn.finals.length === 0) {
        assert.equal(
          messageText(task.status?.message),
          INTERRUPTED_TEXT,
          `the cut turn of ${turn.taskId} says it was interrupted`,
        );
      } else {
        assert.equal(turn.finals[0]!.text, LONG);
        assert.equal(stored, LONG);
      }
    }
    // A client retrying with the same message ids: a command the kill cut short is answered (once,
    // checked below), and an acknowledged one answers with its first reply (CMD-13).
    for (const { taskId, commandId, text } of round.cutCommands) {
      const retried = await send(client, text, { taskId, messageId: commandId });
      assert.equal(typeof retried.status?.message?.metadata?.command, 'string', 'a retried command is answered');
      ledger.replies.push({ taskId, sentTo: taskId, commandId, replyId: retried.status!.message!.messageId, text });
    }
    for (const { sentTo, commandId, replyId, text } of ledger.replies.slice(-5)) {
      const again = await send(client, text, { taskId: sentTo, messageId: commandId });
      assert.equal(
        again.status?.message?.messageId,
        replyId,
        'a command resent after the restart gets its first reply',
      );
    }
    for (const id of ledger.tasks) tasks.set(id, await client.getTask({ tenant: '', id, historyLength: undefined }));
    for (const [id, task] of tasks) {
      for (const [messageId, count] of historyCounts(task))
        assert.equal(count, 1, `message ${messageId} is ${count} times in the history of ${id}`);
    }
    for (const { taskId, commandId, replyId } of ledger.replies) {
      const counts = historyCounts(tasks.get(taskId)!);
      assert.equal(counts.get(commandId), 1, `the command ${commandId} is in the history of ${taskId} once`);
      assert.equal(counts.get(replyId), 1, `the reply ${replyId} is in the history of ${taskId} once`);
    }
    // The restarted server serves commands and new turns on every one of those tasks.
    await Promise.all(
      [...ledger.tasks].map(async (taskId) => {
        const commandId = randomUUID();
        const status = await send(client, '/status', { taskId, messageId: commandId });
        assert.equal(status.status?.state, TASK_STATE_INPUT_REQUIRED);
        assert.equal(status.status?.message?.metadata?.command, 'status');
        ledger.replies.push({
          taskId,
          sentTo: taskId,
          commandId,
          replyId: status.status!.message!.messageId,
          text: '/status',
        });
        const turn = await send(client, 'go on', { taskId });
        assert.equal(turn.status?.state, TASK_STATE_INPUT_REQUIRED);
        assert.equal(messageText(turn.status?.message), SHORT);
      }),
    );
  }

  let second: ServerProcess | undefined;
  let streamedTasks: string[] = [];

  it(
    'loses nothing acknowledged: every task is there, none in flight, every returned reply stored once, and the server serves them',
    { timeout: 60_000 },
    async (t) => {
      const first = await start();
      const round = await crashRound(first, {
        freshTurns: 4,
        continuedTurns: [],
        commandTasks: 4,
        workers: 4,
        killAfterReplies: 20,
      });
      t.diagnostic(
        `round 1: ${round.turns.length} turns killed ${round.killedAfterMs} ms into streaming, ${round.replies} command replies acknowledged (p50 ${round.commandP50} ms, max ${round.commandMax} ms), ${ledger.tasks.size} tasks`,
      );
      checkAfterKill(t);
      second = await start();
      await checkAfterRestart(second, round);
      streamedTasks = round.turns.map((turn) => turn.taskId);
    },
  );

  let third: ServerProcess | undefined;

  it(
    'a second kill, during a burst of commands, continued turns and sub-tasks, loses nothing either',
    { timeout: 60_000 },
    async (t) => {
      assert.ok(second, 'the first round ran');
      const round = await crashRound(second, {
        freshTurns: 2,
        continuedTurns: streamedTasks,
        commandTasks: 2,
        workers: 8,
        spawns: 2,
        killAfterReplies: 10 + Math.floor(Math.random() * 40),
      });
      t.diagnostic(
        `round 2: ${round.turns.length} turns killed ${round.killedAfterMs} ms into streaming, ${round.replies} command replies acknowledged (p50 ${round.commandP50} ms, max ${round.commandMax} ms), ${round.cutCommands.length} cut by the kill, ${ledger.tasks.size} tasks`,
      );
      checkAfterKill(t);
      third = await start();
      await checkAfterRestart(third, round);
    },
  );

  it(
    'a sub-task cut short by a kill ends FAILED saying it was interrupted, and its parent hears of it, as after a clean stop',
    { timeout: 20_000 },
    async () => {
      assert.ok(third, 'the second round ran');
      assert.ok(ledger.subtasks.length > 0, 'sub-tasks were started before the kill');
      const client = await createClient(third.url, 'JSONRPC');
      for (const { id, parent } of ledger.subtasks) {
        const subtask = await client.getTask({ tenant: '', id, historyLength: undefined });
        assert.equal(
          TaskState[subtask.status?.state ?? 0],
          'TASK_STATE_FAILED',
          `sub-task ${id}: ${messageText(subtask.status?.message)}`,
        );
        assert.match(messageText(subtask.status?.message), /interrupted/);
        const notes = (await client.getTask({ tenant: '', id: parent, historyLength: undefined })).history.filter(
          (m) => m.metadata?.['tiny-harness/subtask-note']?.id === id,
        );
        assert.equal(notes.length, 1, `the parent ${parent} has one note about ${id}`);
      }
    },
  );

  it(
    'a clean stop afterwards exits 0 and leaves the file intact with nothing in flight',
    { timeout: 20_000 },
    async (t) => {
      assert.ok(third, 'the second round ran');
      assert.equal(await third.stop('SIGTERM'), 0, 'a clean stop exits 0');
      const check = checkDatabaseFile(databaseFile());
      assert.deepEqual(check.integrity, ['ok']);
      assert.equal(check.foreignKeyProblems, 0);
      assert.equal(check.tasksInFlight, 0);
      t.diagnostic(`${ledger.tasks.size} tasks and ${ledger.replies.length} command replies verified across two kills`);
    },
  );
});

describe('a model server that misbehaves', () => {
  const TIMEOUT_MS = 1000;
  const SECRET = 'sk-fixture-0123456789abcdef0123456789';
  const FAILURES: Record<string, Failure> = {
    'please hang': { kind: 'hang' },
    'please close': { kind: 'close-mid-stream', afterChunks: 2 },
    'please close gracefully': { kind: 'close-mid-stream', afterChunks: 2, graceful: true },
    'please answer garbage': { kind: 'garbage' },
    'please fail 500': { kind: 'status', status: 500 },
    'please reset': { kind: 'close-mid-stream', afterChunks: 0 },
  };

  let model: RunningModelServer;
  let harness: RunningHarness;
  let client: Client;
  let dataDir: string;
  const logLines: string[] = [];

  before(async () => {
    model = await startModelServer({
      reply: 'all good here',
      chunkDelayMs: 5,
      fail: (body) => FAILURES[lastUserText(body)],
    });
    dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-model-faults-'));
    const config = parseConfig(
      JSON.stringify({
        defaultModel: 'fixture:small',
        detectOllama: false,
        modelTimeoutMs: TIMEOUT_MS,
        // Whether the loop lags depends on the machine's load: no refusal for it here (as e2e/support.ts).
        admission: { maxEventLoopDelayMs: 0 },
        providers: {
          fixture: { type: 'openai-compatible', baseURL: model.baseURL, apiKeyEnv: 'FIXTURE_KEY', models: ['small'] },
        },
      }),
    );
    harness = await startHarness({
      config,
      dataDir,
      host: '127.0.0.1',
      port: 0,
      env: { FIXTURE_KEY: SECRET },
      log: createLogger((line) => logLines.push(line)),
    });
    client = await createClient(harness.url, 'JSONRPC');
  });

  after(async () => {
    await harness?.close();
    await model?.close();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  /** A streamed turn that must end INPUT_REQUIRED with a message naming the model and `kind`, in time. */
  async function failingTurn(t: TestContext, text: string, kind: RegExp): Promise<string> {
    const started = Date.now();
    const stream = sendStream(client, text);
    let taskId = '';
    let record: StreamRecord | undefined;
    await within(
      `the turn "${text}"`,
      (async () => {
        for await (const event of stream) {
          if (event.payload?.$case === 'task') {
            taskId = event.payload.value.id;
            record = newStreamRecord(taskId);
          } else if (record) {
            const problem = recordEvent(record, event);
            assert.equal(problem, undefined, problem);
          }
        }
      })(),
    );
    const elapsed = Date.now() - started;
    t.diagnostic(`"${text}": the turn ended after ${elapsed} ms (timeout ${TIMEOUT_MS} ms)`);
    const final = record?.finals[0];
    assert.ok(final, 'the turn ended with a status message');
    assert.equal(final.state, TASK_STATE_INPUT_REQUIRED);
    assert.match(final.text, /^Model fixture:small failed: /, 'the message names the model');
    assert.match(final.text, kind, 'the message names the kind of failure');
    assert.match(final.text, /\/model/, 'the message says what to do');
    assertNoLeak(final.text, [SECRET, model.url, dataDir]);
    const stored = await client.getTask({ tenant: '', id: taskId, historyLength: undefined });
    assert.equal(stored.status?.state, TASK_STATE_INPUT_REQUIRED);
    assert.equal(messageText(stored.status?.message), final.text);
    return taskId;
  }

  /** The server still works: a command and a good turn on the same task, and on a new one. */
  async function assertServing(taskId: string): Promise<void> {
    const status = await send(client, '/status', { taskId });
    assert.equal(status.status?.message?.metadata?.command, 'status');
    const again = await send(client, 'now answer', { taskId });
    assert.equal(again.status?.state, TASK_STATE_INPUT_REQUIRED);
    assert.equal(messageText(again.status?.message), 'all good here');
    const fresh = await send(client, 'hello');
    assert.equal(messageText(fresh.status?.message), 'all good here');
  }

  it('a model that hangs: the turn ends at the timeout saying so, and the server serves on', async (t) => {
    const aborted = model.aborted;
    await assertServing(await failingTurn(t, 'please hang', /timed out/));
    await model.waitForAborted(aborted + 1);
  });

  it('a model that hangs, over a blocking SendMessage: the reply comes at the timeout', async (t) => {
    const aborted = model.aborted;
    const started = Date.now();
    const task = await within('a blocking turn on a hung model', send(client, 'please hang'));
    t.diagnostic(`blocking "please hang": ${Date.now() - started} ms`);
    // The model never answers: the reply can only come from the timeout, which closed the request.
    await model.waitForAborted(aborted + 1);
    assert.equal(task.status?.state, TASK_STATE_INPUT_REQUIRED);
    assert.match(
      messageText(task.status?.message),
      /^Model fixture:small failed: no complete reply within 1000 ms \(timed out\)/,
    );
    assertNoLeak(messageText(task.status?.message), [SECRET, model.url]);
    await assertServing(task.id);
  });

  it('a model that closes the connection mid-stream: the turn ends at once saying the connection closed', async (t) => {
    await assertServing(await failingTurn(t, 'please close', /connection closed before the reply was complete/));
  });

  it('a model whose stream ends cleanly but unfinished: the turn says the reply stream ended early', async (t) => {
    await assertServing(
      await failingTurn(t, 'please close gracefully', /reply stream ended before the model finished/),
    );
  });

  it('a model that answers garbage: the turn ends at once saying the reply was not valid', async (t) => {
    await assertServing(await failingTurn(t, 'please answer garbage', /not a valid reply/));
  });

  // Retried failures: the AI SDK waits 2 s and 4 s before its retries. The harness allows only the
  // retries that fit in the model timeout, so a short timeout still reports the real failure.
  it('a model that answers HTTP 500, with a timeout shorter than the retry back-off: the message still says HTTP 500', async (t) => {
    await assertServing(await failingTurn(t, 'please fail 500', /server error \(HTTP 500\)/));
  });

  it('a model that resets the connection before answering, with a short timeout: the message says the connection closed', async (t) => {
    await assertServing(await failingTurn(t, 'please reset', /closed the connection|connection closed/));
  });

  it('no provider key reaches the log', () => {
    assert.ok(logLines.length > 0, 'the harness logged');
    for (const line of logLines) assert.ok(!line.includes(SECRET), `a log line holds the key: ${line}`);
    assert.ok(
      model.requests.some((r) => r.authorization === `Bearer ${SECRET}`),
      'the key did reach the model server, where it belongs',
    );
  });
});

describe('while a model request hangs', () => {
  // The default model timeout (minutes): the hanging turn runs until the test cancels it.
  let h: TestHarness;

  before(async () => {
    h = await startTestHarness({
      script: {
        reply: 'all good here',
        fail: (body) => (lastUserText(body) === 'please hang' ? { kind: 'hang' } : undefined),
      },
    });
  });

  after(async () => {
    await h?.close();
  });

  it('other turns and commands are served, the hanging turn says it is running, and CancelTask ends it and its request', async () => {
    const client = await h.client('JSONRPC');
    const stream = sendStream(client, 'please hang');
    const first = await within('the first event of the hanging turn', stream.next());
    assert.equal(first.value?.payload?.$case, 'task');
    const taskId = (first.value.payload.value as Task).id;
    const rest = collect(stream);
    await h.model.waitForRequest((request) => lastUserText(request.body) === 'please hang');

    const other = await within('a turn on another task', send(client, 'hello'));
    assert.equal(textOf(other.status?.message), 'all good here');
    const list = await within('a command on a new task', send(client, '/model'));
    assert.equal(list.status?.message?.metadata?.command, 'model');
    const status = await within('a command on the hanging task', send(client, '/status', { taskId }));
    assert.equal(status.status?.state, TASK_STATE_WORKING, 'the hanging turn was still running all along');
    assert.match(textOf(status.status?.message), /Turn running: yes/);

    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: {} });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    const events = await rest;
    const last = events.at(-1)?.payload;
    assert.equal(last?.$case, 'statusUpdate');
    assert.equal(last.value.status?.state, TaskState.TASK_STATE_CANCELED);
    await h.model.waitForAborted(1);
  });
});
