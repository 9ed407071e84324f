/**
 * `tiny-harness chat <url>`: a terminal chat with an A2A agent. The card's commands are listed
 * under the prompt as a `/name` is typed and complete on Tab; the card is read again when it may
 * have changed. A message may take several lines (a paste, Alt+Enter, `\` before Enter). The
 * chat's own commands (`/clear`, `/new`, `/exit`) are answered here. Each message streams its
 * reply as it arrives; command replies are marked with the command's name; a command that starts
 * a sub-task is followed in the background and its result shown when it ends. The conversation
 * stays in one task while the agent waits for input, and moves to a new task in the same context
 * once a task has ended. A message typed during a turn waits for its end, on the agent's queue
 * when it has one (queued-turns.ts). Ctrl+C stops a running turn, twice leaves, and at an empty
 * prompt exits, as Ctrl+D does (chat-interrupts.ts). After a stopped turn, the messages queued
 * still run. Esc Esc lists the points `/rewind` can go back to; after `/fork`
 * the chat offers to go on in the new task (conversation-actions.ts).
 */
import type { Part, Task } from '@a2a-js/sdk';
import { isTerminal, parseCommandText } from '../commands/index.js';
import { chatActionOf, chatHelp, offeredCommands, type ChatAction } from './chat-commands.js';
import { BUSY_PROMPT, chatInput, PROMPT, type ChatInput } from './chat-input.js';
import { ChatScreen } from './chat-screen.js';
import { CardRefresh } from './card-refresh.js';
import { ConversationActions } from './conversation-actions.js';
import { describeClientError, userMessage, type Connection } from './connect.js';
import { styleFor, TurnReader, type Style } from './render.js';
import { turnEvents } from './resume.js';
import { WaitingMessages, type QueuedOnAgent } from './queued-turns.js';
import { ChatSubtasks } from './chat-subtasks.js';
import { ApprovalKeys } from './chat-approval.js';
import { ChatInterrupts, type ChatTurn } from './chat-interrupts.js';
import { taskEndedNote } from './task-ended.js';
import { TerminalPrompt } from './terminal-prompt.js';
import { unknownCommandQuestion } from '../wire.js';

/** Where the chat runs: the terminal's two ends (or a pipe's), and the clock that times a double Ctrl+C. */
export interface ChatTerminal {
  input: NodeJS.ReadStream;
  output: NodeJS.WriteStream;
  /** Milliseconds, for the time between two Ctrl+C (default `Date.now`). */
  now?: () => number;
}

export class Chat {
  private taskId = '';
  private contextId = '';
  private turn: ChatTurn | undefined;
  /** Messages waiting for their turn, here or on the agent's queue. */
  private readonly waiting: WaitingMessages;
  private leftOnAgent = 0; // messages left queued on the agent when the chat was left
  /** Text shaped like a command the card does not list, waiting for "send it anyway?". */
  private unsure: string | undefined;
  private draining: Promise<void> | undefined;
  private closed = false;
  /** Whether `run` began; before, the task resumed is `opening`, whose sub-tasks still running are followed once it does. */
  private running = false;
  private opening: Task | undefined;
  /** Sub-tasks followed to their end; `onSubtask` is what shown sub-tasks are handed to. */
  private readonly subtasks: ChatSubtasks;
  /** Tool calls waiting for approval, answered with one key each. */
  private readonly approval: ApprovalKeys;
  private readonly style: Style;
  private readonly input: ChatInput;
  private readonly screen: ChatScreen;
  private readonly card: CardRefresh;
  /** What Ctrl+C does (chat-interrupts.ts). */
  private readonly interrupts: ChatInterrupts;
  /** Esc Esc's rewind list, and what follows `/rewind n` and `/fork` replies. */
  private readonly actions: ConversationActions;

  constructor(
    private readonly connection: Connection,
    { input, output, now = Date.now }: ChatTerminal,
  ) {
    this.style = styleFor(output);
    this.screen = new ChatScreen(output, this.style);
    this.input = chatInput(input, this.screen, () => offeredCommands(this.connection.commands));
    this.waiting = new WaitingMessages(connection, this.screen);
    // Commands added to the agent since the chat started are offered (card-refresh.ts).
    this.card = new CardRefresh(connection, now, () => this.input.redraw());
    this.card.start(() => !this.turn && !this.draining);
    this.actions = new ConversationActions({
      connection,
      screen: this.screen,
      input: this.input,
      now,
      ids: () => ({ taskId: this.taskId, contextId: this.contextId }),
      busy: () => this.busy,
      idle: async () => void (await this.draining),
      send: (text) => this.dispatch(text),
      resume: (task) => this.resume(task),
    });
    this.subtasks = new ChatSubtasks(connection, this.screen);
    this.approval = new ApprovalKeys({
      input: this.input,
      screen: this.screen,
      send: (text, parts) => this.runTurn(text, undefined, parts),
      canAsk: () => !this.closed && this.waiting.size === 0,
    });
    this.screen.onCommandReply = (reply) => (this.actions.replied(reply), this.approval.replied(reply));
    this.interrupts = new ChatInterrupts({
      connection,
      screen: this.screen,
      input: this.input,
      now,
      turn: () => this.turn,
      draining: () => this.draining !== undefined,
      leave: () => void this.leave(),
      command: (text, taskId) => void this.commandDuringTurn(text, taskId),
    });
  }

  /** A line about the conversation, before it starts. */
  note(text: string): void {
    this.screen.line(this.style.dim(text));
  }

  /** Shows a task's conversation so far (as read, with the reply of a turn running on it), and goes on in it. */
  resume(task: Task, replySoFar?: string): void {
    this.contextId = task.contextId;
    this.taskId = isTerminal(task.status?.state) ? '' : task.id;
    this.screen.history(task);
    this.waiting.followRunning(task, replySoFar);
    if (this.running) void this.subtasks.opened(task);
    else this.opening = task;
  }

  run(): Promise<number> {
    const { card, commands, url, client } = this.connection;
    this.running = true;
    // Reading first: on a terminal, keys typed as soon as the welcome shows are read in raw mode,
    // not echoed and taken as a line by the terminal (the welcome is printed above the prompt).
    this.input.on('line', (line) => this.onLine(line));
    this.input.on('interrupt', () => this.interrupts.press());
    this.input.on('escape', (twice) => this.actions.escape(twice));
    this.input.on('edit', (text) => this.card.typed(text));
    this.input.start();
    this.screen.line(
      `Connected to ${card.name}${card.version ? ` ${card.version}` : ''} at ${url} (${client.transport.protocolName}).`,
    );
    this.screen.line(
      this.style.dim(
        commands.length > 0
          ? 'Type a message, or / for commands. Alt+Enter starts a new line; Ctrl+C stops a turn (twice: leaves); Ctrl+D exits.'
          : 'Type a message. Alt+Enter starts a new line; Ctrl+C cancels a turn (twice: leaves); Ctrl+D exits.',
      ),
    );
    if (commands.length === 0)
      this.screen.line(this.style.dim("(This agent lists no commands; /help lists the chat's.)"));
    if (this.waiting.size > 0) this.drain(); // the resumed task's running turn
    if (this.opening) void this.subtasks.opened(this.opening); // and its sub-tasks still running
    return new Promise((resolve) => {
      this.input.on('close', () => {
        this.closed = true;
        this.card.stop();
        void (async () => {
          await this.draining; // lines read before the end of input still get their replies
          this.subtasks.stop();
          this.screen.endLine();
          if (this.taskId && this.leftOnAgent) this.screen.line(this.waiting.stayNote(this.leftOnAgent, this.taskId));
          const resume = `npx tiny-harness chat ${this.connection.url} --task ${this.taskId}`;
          if (this.taskId) this.screen.write(this.style.dim(`task ${this.taskId}; resume it with: ${resume}\n`));
          resolve(0);
        })();
      });
    });
  }

  private isCommand(text: string): boolean {
    return parseCommandText(text, (name) => this.connection.commands.some((c) => c.name === name)) !== undefined;
  }

  private onLine(line: string): void {
    const text = line.trimEnd(); // a leading space stays: ` /name` is not a command (CMD-3)
    // What was sent stays on the screen, as typed; a queued message is shown when it is sent.
    if (
      this.input instanceof TerminalPrompt &&
      (!this.busy || this.unsure !== undefined || this.isCommand(text) || !text.trim())
    )
      this.screen.line(this.style.dim(this.screen.typed(text)));
    if (this.unsure !== undefined) {
      const unsure = this.unsure;
      this.unsure = undefined;
      if (/^y(es)?$/i.test(text.trim())) {
        this.send(unsure);
      } else {
        this.screen.line(this.style.dim('(not sent)'));
        if (!this.busy) this.prompt();
      }
      return;
    }
    if (!text.trim()) {
      if (!this.busy) this.prompt();
      return;
    }
    const action = chatActionOf(text, this.connection.commands);
    if (action) return this.chatCommand(action);
    if (this.unknownCommand(text)) {
      // The agent may have gained the command since the card was read: read it again first.
      void this.card.read().then(() => {
        if (this.unknownCommand(text)) this.ask(text);
        else this.dispatch(text);
      });
      return;
    }
    this.dispatch(text);
  }

  /** A question when `text` looks like a command the card does not list (CMD-3 would send it to the model). */
  private unknownCommand(text: string): string | undefined {
    return unknownCommandQuestion(text, this.connection.commands.map((c) => c.name)); // prettier-ignore
  }

  /** Asks whether a `/name` the agent does not know should go to the model anyway. */
  private ask(text: string): void {
    this.unsure = text;
    this.screen.line(this.style.error(`${this.unknownCommand(text)} Send it to the model anyway? [y/N]`));
    if (!this.busy) this.prompt();
  }

  /** A message or a command for the agent: a command is answered at once, even while a turn runs. */
  private dispatch(text: string): void {
    const running = this.turn?.reader.taskId;
    if (running && this.isCommand(text)) {
      void this.commandDuringTurn(text, running);
      return;
    }
    this.send(text);
  }

  private chatCommand(action: ChatAction): void {
    if (action === 'exit') return this.waiting.onAgent ? void this.leave() : this.input.close();
    if (action === 'help') return this.afterCommand('/help');
    if (this.busy) {
      this.screen.line(this.style.error('A turn is running: Ctrl+C stops it; then /clear starts a new conversation.'));
      return;
    }
    this.taskId = '';
    this.contextId = '';
    this.screen.clear();
    this.screen.line(this.style.dim('(a new conversation: the next message starts a new task in a new context)'));
  }

  /** After `/help` (the agent's, or the chat's when the agent has none), the chat's own commands, apart. */
  private afterCommand(text: string): void {
    if (/^\/help\s*$/.test(text)) this.screen.line(this.style.dim(chatHelp(this.connection.commands).join('\n')));
  }

  private get busy(): boolean {
    return this.turn !== undefined || this.draining !== undefined;
  }

  /** Sends a message now, or queues it while a turn runs; a queued one is shown again above its reply. */
  private send(text: string): void {
    this.waiting.add(text, this.busy, this.turn?.reader);
    this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = (async () => {
      for (let next = this.waiting.next(); next !== undefined; next = this.waiting.next()) {
        const onAgent = await next.onAgent;
        if (next.onAgent && !onAgent) continue; // refused, and said so
        if (next.typed) this.screen.line(this.style.dim(this.screen.typed(next.text)));
        const reader = await this.runTurn(next.text, onAgent);
        this.afterCommand(next.text);
        await this.approval.answer(reader);
      }
    })().finally(() => {
      this.draining = undefined;
      // A message sent as the loop ended (a key that left an approval's question, then Enter) still runs.
      if (this.waiting.size > 0) this.drain();
      else this.prompt();
    });
  }

  /** Runs a message's turn: sent now, or, queued on the agent, read from the stream kept since. */
  private async runTurn(text: string, onAgent?: QueuedOnAgent, parts?: Part[]): Promise<TurnReader> {
    const turn: ChatTurn = { reader: new TurnReader(), abort: onAgent?.abort ?? new AbortController(), cancel: 'no' };
    const { reader } = turn;
    if (onAgent) reader.taskId = onAgent.taskId; // Ctrl+C can stop its turn before its first event
    if (onAgent?.replySoFar) this.screen.show(reader.replySoFar(onAgent.replySoFar), this.subtasks.onSubtask);
    this.turn = turn;
    this.input.setPrompt(BUSY_PROMPT);
    let failed = false;
    try {
      const message = userMessage(text, { taskId: this.taskId, contextId: this.contextId, parts });
      // A stream that breaks before the turn ends is resumed where it broke off (issue 24).
      const said = (line: string) => (this.screen.endReply(), this.screen.line(this.style.dim(line)));
      const events = onAgent?.events ?? turnEvents(this.connection.client, message, turn.abort.signal, said);
      for await (const event of events) {
        this.screen.show(reader.read(event), this.subtasks.onSubtask);
        this.interrupts.read(turn);
      }
      this.screen.show(reader.finish(), this.subtasks.onSubtask);
      this.screen.endReply();
    } catch (error) {
      this.screen.endReply();
      failed = true;
      if (turn.abort.signal.aborted) this.screen.line(this.style.dim('(stopped waiting for the turn)'));
      else this.screen.line(this.style.error(`error: ${describeClientError(error, this.connection.url)}`));
    } finally {
      clearTimeout(turn.timer);
      this.turn = undefined;
      this.screen.endLine();
    }
    if (reader.taskId) {
      this.contextId = reader.contextId || this.contextId;
      this.taskId = isTerminal(reader.state) ? '' : reader.taskId;
    }
    // After a failure, a task that has ended meanwhile (canceled elsewhere, say) is left for a new one.
    const ended = failed && this.taskId ? await taskEndedNote(this.connection.client, this.taskId) : undefined;
    if (ended) {
      this.screen.line(this.style.dim(ended));
      this.taskId = '';
    }
    return reader;
  }

  private async commandDuringTurn(text: string, taskId: string): Promise<void> {
    try {
      const request = {
        tenant: '',
        message: userMessage(text, { taskId, contextId: this.contextId }),
        configuration: undefined,
        metadata: {},
      };
      const result = await this.connection.client.sendMessage(request);
      // The running turn's stream carries the reply too; `show` prints it once.
      if ('status' in result)
        this.screen.show(
          new TurnReader().read({ payload: { $case: 'task', value: result } }).filter((s) => s.kind === 'command'),
          this.subtasks.onSubtask,
        );
      this.afterCommand(text);
    } catch (error) {
      this.screen.line(this.style.error(`error: ${describeClientError(error, this.connection.url)}`));
    }
  }

  /** Leaves now: what waits here is dropped, and said; what waits on the agent's queue stays there, and runs. */
  private async leave(): Promise<void> {
    const left = this.waiting.leave(); // before the turn's end lets the next message start
    this.turn?.abort.abort();
    this.leftOnAgent = await left;
    this.input.close();
  }

  /** The chat waits for a message again. */
  private prompt(): void {
    if (!this.closed) this.input.setPrompt(PROMPT);
  }
}
