/**
 * The chat's own commands, answered by the chat and never sent to the agent: `/clear` (or
 * `/new`) starts a new conversation, `/exit` leaves. They win over an agent's command of the
 * same name, as they are what the person at the terminal sees listed. `/help` is the agent's
 * when it lists one (the chat adds its own list after the reply), the chat's otherwise.
 */
import { describeCommand } from './completion.js';
import type { CardCommand } from './connect.js';
import { REWIND_COMMAND } from '../conversation-replies.js';

export type ChatAction = 'clear' | 'exit' | 'help';

interface ChatCommand extends CardCommand {
  action: ChatAction;
}

const COMMANDS: readonly ChatCommand[] = [
  {
    name: 'clear',
    argumentHint: '',
    description: 'Start a new conversation (a new task in a new context) and clear the screen',
    action: 'clear',
  },
  { name: 'new', argumentHint: '', description: 'The same as /clear', action: 'clear' },
  { name: 'exit', argumentHint: '', description: 'Leave the chat, as Ctrl+D does', action: 'exit' },
];

const HELP: ChatCommand = {
  name: 'help',
  argumentHint: '',
  description: "List this chat's commands and the agent's",
  action: 'help',
};

/** The chat's commands next to `agent`'s: `/help` is the chat's only when the agent has none. */
function chatCommands(agent: readonly CardCommand[]): readonly ChatCommand[] {
  return agent.some((c) => c.name === 'help') ? COMMANDS : [...COMMANDS, HELP];
}

/** What the chat does for `text`, when it is one of its own commands (typed alone, without arguments). */
export function chatActionOf(text: string, agent: readonly CardCommand[]): ChatAction | undefined {
  const name = /^\/([a-z]+)\s*$/.exec(text)?.[1];
  return chatCommands(agent).find((c) => c.name === name)?.action;
}

/** The commands the menu and Tab offer: the agent's, then the chat's own. */
export function offeredCommands(agent: readonly CardCommand[]): CardCommand[] {
  const own = chatCommands(agent);
  return [...agent.filter((c) => !own.some((o) => o.name === c.name)), ...own];
}

/**
 * The lines that list the chat's commands and keys, apart from the agent's commands; and the
 * agent's too when its own `/help` does not list them.
 */
export function chatHelp(agent: readonly CardCommand[]): string[] {
  const agentHelp = agent.some((c) => c.name === 'help');
  const agentLines = agent.length > 0 ? ["The agent's commands:", ...agent.map((c) => `  ${describeCommand(c)}`)] : [];
  return [
    ...(agentHelp ? [] : agentLines),
    "This chat's own commands (answered here, never sent to the agent):",
    ...chatCommands(agent).map((c) => `  /${c.name} — ${c.description}`),
    'Keys: Enter sends; Alt+Enter, or \\ before Enter, starts a new line; Tab completes a command;',
    '  Ctrl+C stops a turn (at an empty prompt: leaves); Ctrl+D leaves.',
    ...(agent.some((c) => c.name === REWIND_COMMAND)
      ? ['  Esc Esc lists the points /rewind can take the conversation back to.']
      : []),
  ];
}
