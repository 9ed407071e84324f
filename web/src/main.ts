/**
 * The chat page: reads the agent card (its name, its commands), connects the SDK's client, and
 * wires the input (completion keys, Enter to send, Shift+Enter for a new line) to the
 * conversation and the transcript.
 */
import type { AgentCard } from '@a2a-js/sdk';
import { splitCommandText, stateName, unknownCommandQuestion } from '../../src/wire.js';
import { COMPACT_COMMAND, REWIND_COMMAND } from '../../src/conversation-replies.js';
import { CardReader, CardRefresh } from './card.js';
import { connect, Conversation } from './chat.js';
import { Completion, commandsFromCard } from './completion.js';
import { harnessFetch, retryingText, retryWhileUnreachable } from './reachability.js';
import { RecentList } from './recent.js';
import { askForToken, cardNeedsToken, formPrompt, keptToken, setTokenPrompt } from './sign-in.js';
import { CompletionList } from './completion-list.js';
import { ConversationActions } from './conversation-actions.js';
import { oneLine, showError, Transcript, TurnView } from './render.js';
import { storeConversation, storedConversation, type QueuedMessage } from './stored.js';
import { SubtaskWatch } from './task-watch.js';
import { waitPastFor } from './task-wait.js';
import { TASK_PARAM } from './subagent-chip.js';
import { Turns } from './turns.js';

/** The card is read again this often while the page is idle (command files come and go); a 304 when unchanged. */
const CARD_REFRESH_MS = 30_000;
/** A sub-task's state is followed live for at most this long; pressing its link reads it again. */
const SUBTASK_WATCH_MS = 15 * 60_000;

function byId<T extends HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`the page has no #${id}`);
  return el as T;
}

async function main(): Promise<void> {
  const input = byId<HTMLTextAreaElement>('input');
  const form = byId<HTMLFormElement>('composer');
  const errorLine = byId<HTMLElement>('error');
  const taskInfo = byId<HTMLElement>('task-info');
  const title = byId<HTMLElement>('agent-name');
  const newChat = byId<HTMLButtonElement>('new-chat');
  const stop = byId<HTMLButtonElement>('stop');
  const recentButton = byId<HTMLButtonElement>('recent');
  // A task named in the address (a sub-agent's chip opens one): shown in place of the kept conversation.
  const linkedTask = new URLSearchParams(location.search).get(TASK_PARAM) ?? undefined;
  const recent = new RecentList(byId('recent-list'), recentButton, (taskId) => void reopen(taskId));

  const completion = new Completion();
  const list = new CompletionList(
    byId('completions'),
    input,
    (index) => pick(index),
    (index) => {
      completion.highlight(index);
      list.render(completion);
    },
  );

  /** The error line says the harness cannot be reached and when the page tries again; cleared once it answers. */
  let retrying = false;
  const unreachable = (error: unknown, delayMs: number) => {
    retrying = true;
    showError(errorLine, retryingText(error, delayMs));
  };
  const reachedAgain = () => {
    if (retrying) showError(errorLine, undefined);
    retrying = false;
  };
  // A call the harness refuses for its token waits on this form, then goes on (sign-in.ts).
  setTokenPrompt(formPrompt(byId('sign-in'), byId('sign-in-why'), byId('token')));
  const cards = new CardReader(location.href);
  let card: AgentCard;
  try {
    // The first read always has a card: no ETag was sent.
    card = (await retryWhileUnreachable(() => cards.read(), unreachable))!;
    reachedAgain();
  } catch (error) {
    showError(errorLine, `Could not read the agent card: ${oneLine(error)}`);
    return;
  }
  if (cardNeedsToken(card) && keptToken() === undefined)
    await askForToken('This agent needs you to sign in: paste your token.');
  const conversation = new Conversation(
    await connect(card, location.href),
    waitPastFor(card, location.href, harnessFetch),
  );
  // A stream that broke is resumed where it broke off (issue 24); the error line says so meanwhile.
  conversation.resumeNotices = {
    onDropped: () => showError(errorLine, 'The connection dropped; reconnecting…'),
    onResumed: () => showError(errorLine, undefined),
  };
  // Rewind to here, fork from here, on each message of yours (conversation-actions.ts).
  const actions: ConversationActions = new ConversationActions(byId('log'), {
    offers: (command) => completion.all.some((c) => c.name === command),
    taskId: () => conversation.taskId,
    busy: (): boolean => turns.busy,
    command: (text) => conversation.command(text),
    open: (taskId) => reopen(taskId),
    setText: (text) => setText(text),
    error: (message) => showError(errorLine, message),
  });
  const transcript = new Transcript(
    byId('log'),
    {
      load: (id) => conversation.subtask(id),
      watch: (id, onState) => conversation.watchSubtask(id, onState, AbortSignal.timeout(SUBTASK_WATCH_MS)),
    },
    // The approve and deny buttons of a tool call send their command as if it were typed; a question's form its answer.
    (text, parts) => {
      if (parts) return void turns.send(text, false, parts);
      setText(text);
      void send();
    },
    actions,
  );
  // While a sub-task of the open task runs and no turn streams here, the task is followed for its note.
  const subtaskWatch = new SubtaskWatch(
    conversation,
    transcript,
    () => (reachedAgain(), showTask(), saveConversation()),
    unreachable,
    (error) => showError(errorLine, oneLine(error)),
  );
  title.textContent = card.name || 'tiny-harness';
  document.title = card.name || 'tiny-harness';
  completion.setCommands(commandsFromCard(card));

  const turns = new Turns(conversation, transcript, {
    redraw: () => (showStop(), showTask()),
    save: () => saveConversation(),
    error: (message) => showError(errorLine, message),
    reached: reachedAgain,
    unreachable,
    giveBack: (text) => setText([input.value, text].filter(Boolean).join('\n')),
    idleWatch: { start: () => subtaskWatch.start(), stop: () => subtaskWatch.stop() },
  });
  /** While a turn of the task runs (its stream open here), the Stop button shows, when the agent has /stop (CMD-32). */
  const showStop = () => {
    stop.hidden = !(turns.turnRunning && completion.all.some((c) => c.name === 'stop'));
  };
  const showTask = () => {
    const model = conversation.model ? ` · ${conversation.model}` : '';
    taskInfo.textContent = conversation.taskId
      ? `task ${conversation.taskId.slice(0, 8)} · ${stateName(conversation.state)}${model}`
      : model.slice(3);
    taskInfo.title = conversation.taskId ?? '';
    taskInfo.dataset['model'] = conversation.model ?? '';
  };

  /** Keeps the conversation for the next load of the page (a reload goes on where it was). */
  function saveConversation(): void {
    if (linkedTask) return; // a tab opened on a sub-task leaves the kept conversation to the page that opened it
    storeConversation({
      taskId: conversation.taskId,
      contextId: conversation.contextId,
      replyArtifact: turns.replyArtifact,
      queued: turns.queuedMessages,
    });
  }

  /** Draws the conversation kept from before a reload (or the task the address names), and follows a turn still running on it. */
  async function restoreConversation(): Promise<void> {
    if (linkedTask) return openTask(linkedTask);
    const stored = storedConversation();
    if (!stored?.taskId) {
      if (stored?.contextId) conversation.contextId = stored.contextId;
      return;
    }
    await openTask(stored.taskId, stored.replyArtifact, stored.queued);
  }

  /** Draws a task's conversation read back, its messages still queued, and follows a turn still running on it. */
  async function openTask(taskId: string, storedArtifact?: string, queued: QueuedMessage[] = []): Promise<void> {
    try {
      const { events, running, reply, messageIds } = await conversation.restore(taskId, storedArtifact);
      for (const event of events) new TurnView(transcript, false).handle(event);
      showTask();
      turns.replyArtifact = reply?.artifactId;
      turns.resume(queued, messageIds);
      saveConversation();
      if (running) void turns.follow(reply);
      else if (!turns.busy) subtaskWatch.start();
    } catch (error) {
      // Gone, or another user's: start afresh, saying why.
      conversation.reset();
      saveConversation();
      showTask();
      showError(errorLine, `The conversation could not be read again: ${oneLine(error)}`);
    }
  }

  /** The list of recent conversations: opened and closed by its button, read afresh each time. */
  async function toggleRecent(): Promise<void> {
    if (recent.isOpen) return recent.close();
    recent.open();
    try {
      recent.show(await conversation.recent(), conversation.taskId);
    } catch (error) {
      recent.note(`Could not list your conversations: ${oneLine(error)}`);
    }
  }

  /** Opens another of the user's conversations in place of this one. */
  async function reopen(taskId: string): Promise<void> {
    if (turns.busy) {
      showError(
        errorLine,
        'A turn is still running here: stop it, or wait for it to end, before opening another conversation.',
      );
      return;
    }
    recent.close();
    subtaskWatch.stop();
    conversation.reset();
    transcript.clear();
    showError(errorLine, undefined);
    await openTask(taskId);
    input.focus();
  }

  function setText(text: string): void {
    input.value = text;
    input.setSelectionRange(text.length, text.length);
    changed();
  }

  function pick(index: number): void {
    const text = completion.pick(index);
    if (text !== undefined) setText(text);
  }

  function changed(): void {
    completion.update(input.value);
    list.render(completion);
    // Grow with the text, up to the CSS max-height (CSSOM, which the CSP allows).
    input.style.height = 'auto';
    input.style.height = `${input.scrollHeight}px`;
    cardRefresh.typed(
      input.value,
      completion.all.map((c) => c.name),
    );
  }

  // The card read again: new command files are offered without a reload.
  const cardRefresh = new CardRefresh(
    cards,
    {
      changed: (fresh) => {
        completion.setCommands(commandsFromCard(fresh));
        list.render(completion);
        showStop();
      },
      answered: reachedAgain,
      unreachable,
    },
    CARD_REFRESH_MS,
    () => !turns.busy,
  );

  /** Text shaped like a command the card does not list, once asked about: sending it again sends it. */
  let confirmedUnknown: string | undefined;

  /** Sends what is typed: a command at once; a message now, or to the task's queue behind a running turn. */
  async function send(): Promise<void> {
    const text = input.value.trim();
    if (!text) return;
    // CMD-3 would send an unknown /name to the model: a typo is asked about first, the text kept,
    // once the card has been read again (the command may be a file added since the page loaded).
    const question = () =>
      unknownCommandQuestion(
        text,
        completion.all.map((c) => c.name),
      );
    if (question() && confirmedUnknown !== text) await cardRefresh.now();
    const asked = question();
    if (asked && confirmedUnknown !== text) {
      confirmedUnknown = text;
      showError(errorLine, `${asked} Press Enter again to send it to the model anyway.`);
      return;
    }
    confirmedUnknown = undefined;
    const name = splitCommandText(text)?.name;
    const isCommand = !!name && completion.all.some((c) => c.name === name);
    if (!isCommand && turns.busy) {
      showError(errorLine, undefined);
      setText('');
      turns.queue(text);
      return;
    }
    if (turns.busy && !conversation.taskId) {
      showError(errorLine, 'Wait a moment: the first reply has not started yet.');
      return;
    }
    showError(errorLine, undefined);
    setText('');
    await turns.send(text, isCommand);
    // What a rewind hid and a compaction's summary are drawn as GetTask now has the conversation.
    const rewound = name === REWIND_COMMAND && splitCommandText(text)?.args;
    if (isCommand && (rewound || name === COMPACT_COMMAND) && conversation.taskId && !turns.busy)
      await reopen(conversation.taskId);
  }

  /** The page leaves the conversation: its queued messages stay in its task's queue; texts never sent come back. */
  function leaveConversation(): void {
    const unsent = turns.leave();
    if (unsent.length > 0) setText([input.value, ...unsent].filter(Boolean).join('\n'));
  }

  input.addEventListener('input', changed);
  input.addEventListener('keydown', (event) => {
    if (event.isComposing) return;
    // Shift+Tab keeps moving the focus backwards.
    if (!(event.key === 'Tab' && event.shiftKey)) {
      const outcome = completion.key(event.key);
      if (outcome.handled) {
        event.preventDefault();
        if (outcome.text !== undefined) setText(outcome.text);
        else list.render(completion);
        return;
      }
      list.render(completion);
    }
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault();
      void send();
    }
  });
  input.addEventListener('blur', () => {
    completion.close();
    list.render(completion);
  });
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    void send();
    input.focus();
  });
  stop.addEventListener('click', () => {
    stop.hidden = true;
    setText('/stop');
    void send();
    input.focus();
  });
  recentButton.addEventListener('click', () => void toggleRecent());
  newChat.addEventListener('click', () => {
    recent.close();
    leaveConversation();
    subtaskWatch.stop();
    conversation.reset();
    saveConversation();
    transcript.clear();
    showError(errorLine, undefined);
    showTask();
    input.focus();
  });

  await restoreConversation();
  input.disabled = false;
  input.focus();
  document.body.dataset['ready'] = 'true';
}

main().catch((error) => {
  const line = document.getElementById('error');
  if (line) showError(line, oneLine(error));
});
