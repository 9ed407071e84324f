/**
 * The user's answer to a tool call's question (MCP elicitation, issue 39, TOOL-5), on any
 * instance: a message holding an `ElicitationAnswer` data part (or "done" for a link to open),
 * checked against the question the task's status asks (its id; a form's content against its
 * JSON Schema, with ajv), refused with the reason when it does not fit, the task waiting still.
 * - While the turn that asked runs (on this instance or another), the answer is recorded as a
 *   reply in the task's log, which the waiting call reads (`elicitation-waits.ts`); the answer's
 *   stream follows the turn to its end.
 * - Once no turn runs (the harness restarted, or the instance that asked went away), the MCP
 *   request is gone: the call is closed as failed, and a turn tells the model so, with the answer.
 * - An answer recorded for a turn whose instance then died, before its call read it, is found
 *   unread once that turn is gone (`resumeUnread`) and goes the same way.
 */
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { AgentExecutionEvent, ServerCallContext } from '@a2a-js/sdk/server';
import {
  ELICITATION_ANSWER_NOTICE,
  ELICITATION_ENDED_NOTICE,
  elicitationAnswerOf,
  elicitationOf,
  isDoneText,
  type ElicitationAnswer,
  type ElicitationData,
} from '../elicitations.js';
import { HarnessError } from '../errors.js';
import { dataPart, isFinalToolStatus, NOTICE_KEY, textPart, toolCallsOf } from '../wire.js';
import type { LogSubscription } from '../ports.js';
import type { TaskEngine } from './engine.js';
import type { StartedTurn } from '../engine-ports.js';
import { randomUUID } from 'node:crypto';
import { agentMessage, statusUpdate } from './events.js';
import { lostQuestionText, QUESTION_LOST_TEXT } from './elicitation-text.js';
import { asStreamResponse, isFinalStatus, withGeneration } from './turn/turn-stream.js';
import { GENERATION_KEY } from '../wire.js';

export interface ElicitationAnswersOptions {
  engine: Pick<TaskEngine, 'isBusy' | 'post' | 'settle' | 'startTurn'>;
  tasks: { load(taskId: string, context: ServerCallContext): Promise<Task | undefined> };
  feeds: { follow(taskId: string, known?: number): Promise<LogSubscription> };
}

const WAITING_STATES: ReadonlySet<TaskState | undefined> = new Set([
  TaskState.TASK_STATE_INPUT_REQUIRED,
  TaskState.TASK_STATE_AUTH_REQUIRED,
]);

export class ElicitationAnswers {
  constructor(private readonly options: ElicitationAnswersOptions) {}

  /**
   * The answer's stream when `message` answers the question its task waits on; undefined for
   * any other message. Throws `params_invalid` for an answer that does not fit the question.
   */
  async answer(
    message: Message,
    context: ServerCallContext,
  ): Promise<AsyncGenerator<StreamResponse, void, undefined> | undefined> {
    const given = elicitationAnswerOf(message.parts);
    const done = given === undefined && Boolean(message.taskId) && isDoneMessage(message);
    if (given === undefined && !done) return undefined;
    if (given && 'malformed' in given) throw new HarnessError('params_invalid', `Not an answer: ${given.malformed}`);
    if (!message.taskId) throw new HarnessError('params_invalid', 'An answer to a question names its task (taskId).');
    const task = await this.options.tasks.load(message.taskId, context);
    if (!task) throw new HarnessError('task_not_found', `Task not found: ${message.taskId}`);
    const question = WAITING_STATES.has(task.status?.state) ? elicitationOf(task.status?.message) : undefined;
    // "done" is an ordinary message unless a link's step waits.
    if (done && question?.mode !== 'url') return undefined;
    const answer: ElicitationAnswer = given ?? { elicitation: question!.id, action: 'accept' };
    if (!question || question.id !== answer.elicitation)
      throw new HarnessError('params_invalid', `No question "${answer.elicitation}" waits on this task.`);
    await this.check(question, answer);
    return (await this.options.engine.isBusy(task.id))
      ? this.toLiveCall(task, message, answer, context)
      : this.toModel(task, question, message, answer, context);
  }

  /** Refuses an answer whose content does not fit the form's schema. */
  private async check(question: ElicitationData, answer: ElicitationAnswer): Promise<void> {
    if (answer.action !== 'accept' || question.mode !== 'form') return;
    const why = (await import('./elicitation-schema.js')).formProblem(question, answer.content ?? {});
    if (why === undefined) return;
    throw new HarnessError('params_invalid', `The answer does not fit the question: ${why}. The question still waits.`);
  }

  /** The turn that asked runs: the answer is a reply in the log, which the call reads; the stream follows the turn. */
  private async *toLiveCall(
    task: Task,
    message: Message,
    answer: ElicitationAnswer,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { engine, feeds } = this.options;
    const subscription = await feeds.follow(task.id);
    try {
      const reply = agentMessage(task.id, task.contextId, `Answer: ${answer.action}.`, ELICITATION_ANSWER_NOTICE);
      reply.parts.push(dataPart({ ...answer }));
      // The user's message is kept as a notice: its data is the harness's, not the model's.
      const stored = { ...message, metadata: { ...message.metadata, [NOTICE_KEY]: ELICITATION_ANSWER_NOTICE } };
      const update = statusUpdate(task.id, task.contextId, task.status!.state, reply);
      const posted = await engine.post(update, context, { message: stored });
      const after = Number(posted.metadata?.[GENERATION_KEY] ?? 0);
      yield { payload: { $case: 'task', value: posted } };
      yield { payload: { $case: 'statusUpdate', value: withGeneration(update, after) } };
      if (!(await engine.isBusy(task.id))) {
        // The turn went away as the answer was recorded (its instance died): the call cannot read it.
        const resumed = await this.resumeUnread(task.id, context);
        if (resumed) yield* resumed.events;
        // Otherwise the turn ended meanwhile (the question timed out as it was answered): nothing more comes.
        return;
      }
      for (;;) {
        const entry = await subscription.next();
        if (!entry) return;
        if (entry.generation <= after) continue;
        const item = asStreamResponse(entry);
        if (item) yield item;
        // A call closed as lost (its turn went away) is followed by the turn that tells the model.
        if (isFinalStatus(entry.event) && !isLostCallClosing(entry.event)) return;
      }
    } finally {
      subscription.close();
    }
  }

  /**
   * The turn of an answer recorded, but not read by the call that asked, before that turn went
   * away (its instance died): the call is closed as failed and a turn tells the model, with the
   * answer. Undefined when no answer waits unread, or another instance took it first.
   */
  async resumeUnread(taskId: string, context: ServerCallContext): Promise<StartedTurn | undefined> {
    const task = await this.options.tasks.load(taskId, context);
    const unread = task ? unreadAnswerOf(task) : undefined;
    if (!task || !unread || (await this.options.engine.isBusy(taskId))) return undefined;
    if (!(await this.closeCall(task, unread.question, context))) return undefined;
    const message: Message = {
      messageId: randomUUID(),
      taskId,
      contextId: task.contextId,
      role: Role.ROLE_USER,
      parts: [dataPart({ ...unread.answer })],
      metadata: {},
      extensions: [],
      referenceTaskIds: [],
    };
    // Past the limit, as a turn resumed after `/approve` is: the turn that asked held a place.
    return this.tellModel(unread.question, message, unread.answer, context, true);
  }

  /** No turn runs: the call that asked is closed as failed, and a turn tells the model, with the answer. */
  private async *toModel(
    task: Task,
    question: ElicitationData,
    message: Message,
    answer: ElicitationAnswer,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    if (!(await this.closeCall(task, question, context)))
      throw new HarnessError('params_invalid', `No question "${question.id}" waits on this task.`);
    yield* (await this.tellModel(question, message, answer, context)).events;
  }

  /** Closes the call of `question` as failed, unless the task has moved on: whether it did. */
  private async closeCall(task: Task, question: ElicitationData, context: ServerCallContext): Promise<boolean> {
    const closed = await this.options.engine.settle(task.id, context, (stored) => {
      if (!WAITING_STATES.has(stored.status?.state)) return undefined;
      const waits = elicitationOf(stored.status?.message)?.id ?? unreadAnswerOf(stored)?.answer.elicitation;
      if (waits !== question.id) return undefined;
      const closing = agentMessage(task.id, task.contextId, QUESTION_LOST_TEXT, ELICITATION_ENDED_NOTICE);
      closing.parts.push(...openCallsOf(stored, question.callId));
      return statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_INPUT_REQUIRED, closing);
    });
    return closed !== undefined;
  }

  /** The turn that tells the model what was asked and answered, and that the call failed. */
  private async tellModel(
    question: ElicitationData,
    message: Message,
    answer: ElicitationAnswer,
    context: ServerCallContext,
    pastLimit = false,
  ): Promise<StartedTurn> {
    const told: Message = {
      ...message,
      role: Role.ROLE_USER,
      parts: [
        textPart(lostQuestionText(question, answer)),
        ...message.parts.filter((p) => p.content?.$case !== 'text'),
      ],
    };
    return this.options.engine.startTurn(told, context, { pastLimit });
  }
}

/**
 * The answer a waiting task's status records but no call has read (the status is still the
 * answer's reply), with the question it answers, found in the history.
 */
function unreadAnswerOf(task: Task): { question: ElicitationData; answer: ElicitationAnswer } | undefined {
  const status = task.status?.message;
  if (!WAITING_STATES.has(task.status?.state) || status?.metadata?.[NOTICE_KEY] !== ELICITATION_ANSWER_NOTICE)
    return undefined;
  const answer = elicitationAnswerOf(status.parts);
  if (!answer || 'malformed' in answer) return undefined;
  const question = task.history.map((m) => elicitationOf(m)).findLast((q) => q?.id === answer.elicitation);
  return question ? { question, answer } : undefined;
}

/** The status of `closeCall`: waiting for input while the turn that tells the model starts. */
function isLostCallClosing(event: AgentExecutionEvent): boolean {
  return (
    event.kind === 'statusUpdate' &&
    event.data.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED &&
    event.data.status.message?.metadata?.[NOTICE_KEY] === ELICITATION_ENDED_NOTICE
  );
}

/** The closing report of the call that asked, when the history still shows it open. */
function openCallsOf(task: Task, callId: string) {
  const newest = task.history
    .flatMap((m) => toolCallsOf(m.parts))
    .filter((call) => call.id === callId)
    .at(-1);
  if (!newest || isFinalToolStatus(newest.status)) return [];
  return [dataPart({ ...newest, status: 'failed', output: QUESTION_LOST_TEXT })];
}

/** A message of one text part saying "done". */
function isDoneMessage(message: Message): boolean {
  const [only, ...rest] = message.parts;
  return rest.length === 0 && only?.content?.$case === 'text' && isDoneText(only.content.value);
}
