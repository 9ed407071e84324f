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
 */
import { Role, TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
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
      // The turn ended meanwhile (the question timed out as it was answered): nothing more comes.
      if (!(await engine.isBusy(task.id))) return;
      for (;;) {
        const entry = await subscription.next();
        if (!entry) return;
        if (entry.generation <= after) continue;
        const item = asStreamResponse(entry);
        if (item) yield item;
        if (isFinalStatus(entry.event)) return;
      }
    } finally {
      subscription.close();
    }
  }

  /** No turn runs: the call that asked is closed as failed, and a turn tells the model, with the answer. */
  private async *toModel(
    task: Task,
    question: ElicitationData,
    message: Message,
    answer: ElicitationAnswer,
    context: ServerCallContext,
  ): AsyncGenerator<StreamResponse, void, undefined> {
    const { engine } = this.options;
    await engine.settle(task.id, context, (stored) => {
      if (elicitationOf(stored.status?.message)?.id !== question.id) return undefined;
      const closing = agentMessage(task.id, task.contextId, QUESTION_LOST_TEXT, ELICITATION_ENDED_NOTICE);
      closing.parts.push(...openCallsOf(stored, question.callId));
      return statusUpdate(task.id, task.contextId, TaskState.TASK_STATE_INPUT_REQUIRED, closing);
    });
    const told: Message = {
      ...message,
      role: Role.ROLE_USER,
      parts: [
        textPart(lostQuestionText(question, answer)),
        ...message.parts.filter((p) => p.content?.$case !== 'text'),
      ],
    };
    const turn = await engine.startTurn(told, context);
    yield* turn.events;
  }
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
