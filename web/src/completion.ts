/**
 * Command completion for the chat input, without a DOM: which of the card's commands match what
 * is typed, which one is highlighted, and what a key does. The view (render.ts) draws whatever
 * state this holds; main.ts feeds it the input's text and its key presses.
 */
import { argumentValuesOf, COMMANDS_EXTENSION_URI, matchingValues, type ArgumentValue } from '../../src/wire.js';

/** One command as the card lists it. */
export interface CommandInfo {
  name: string;
  description: string;
  /** e.g. `[<model>]`; empty when the command takes no arguments. */
  argumentHint: string;
  /** The values each argument can take, by position (the command-arguments extension), when the card lists them. */
  argumentValues?: ArgumentValue[][];
}

/** One line of the list: a command, or a value of the argument being typed. */
export interface CompletionItem {
  /** The command's name, or the value. */
  name: string;
  /** What the list shows: `/name`, or the value. */
  label: string;
  hint: string;
  description: string;
  /** The input's text once this item is picked. */
  text: string;
}

/**
 * The commands the card offers, in the card's order: the `params.commands` of its
 * `capabilities.extensions[]` entry with the extension's URI. Anything malformed is skipped;
 * a card without the extension offers none.
 */
export function commandsFromCard(card: unknown): CommandInfo[] {
  const extensions = (card as { capabilities?: { extensions?: unknown } } | null | undefined)?.capabilities?.extensions;
  if (!Array.isArray(extensions)) return [];
  const entry = extensions.find((e): e is { params?: unknown } => isObject(e) && e['uri'] === COMMANDS_EXTENSION_URI);
  const commands = isObject(entry?.params) ? entry.params['commands'] : undefined;
  if (!Array.isArray(commands)) return [];
  const values = argumentValuesOf(
    extensions.filter(
      (e): e is { uri: string; params?: Record<string, unknown> } => isObject(e) && typeof e['uri'] === 'string',
    ),
  );
  const found: CommandInfo[] = [];
  for (const command of commands) {
    if (!isObject(command) || typeof command['name'] !== 'string' || !command['name']) continue;
    const name = command['name'];
    found.push({
      name,
      description: typeof command['description'] === 'string' ? command['description'] : '',
      argumentHint: typeof command['argument_hint'] === 'string' ? command['argument_hint'] : '',
      ...(values.has(name) ? { argumentValues: values.get(name) } : {}),
    });
  }
  return found;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The keys the list reacts to while it is open. */
export type CompletionKey = 'ArrowDown' | 'ArrowUp' | 'Tab' | 'Enter' | 'Escape';

/**
 * What a key press did. `handled: false` means the list ignored it (it is closed, or the key is
 * not one of its keys) and the input should do its usual thing, e.g. Enter sends.
 * `text` is the input's new text when a command was picked.
 */
export type KeyOutcome = { handled: false } | { handled: true; text?: string };

/**
 * The list's state. It is open while the input holds a `/` followed by the start of a command
 * name (no white space yet) and at least one command's name starts with it, or, after a
 * command's name, while values the card lists for the argument being typed match it (the
 * command-arguments extension); Escape closes it until the text changes.
 */
export class Completion {
  private commands: readonly CommandInfo[];
  private text = '';
  private dismissedAt: string | undefined;
  private matches: CompletionItem[] = [];
  /** What is typed of the argument being completed; undefined while a command's name is. */
  private argumentTyped: string | undefined;
  /** The values the argument being completed can take (all, not only those matching). */
  private argumentValues: readonly ArgumentValue[] = [];
  private active = 0;
  /** The highlight was moved with the arrow keys since the text last changed: Enter picks it. */
  private chosen = false;

  constructor(commands: readonly CommandInfo[] = []) {
    this.commands = commands;
  }

  /** Replaces the command list (the card changed), keeping the typed text. */
  setCommands(commands: readonly CommandInfo[]): void {
    this.commands = commands;
    this.refilter();
  }

  /** Every command the card offers, in its order. */
  get all(): readonly CommandInfo[] {
    return this.commands;
  }

  get isOpen(): boolean {
    return this.matches.length > 0 && this.dismissedAt !== this.text;
  }

  /** The matching commands, in the card's order, or the matching values of the argument being typed (empty while closed). */
  get items(): readonly CompletionItem[] {
    return this.isOpen ? this.matches : [];
  }

  /** The index of the highlighted item (meaningful only while open). */
  get activeIndex(): number {
    return this.active;
  }

  get activeItem(): CompletionItem | undefined {
    return this.isOpen ? this.matches[this.active] : undefined;
  }

  /** The input's text changed. */
  update(text: string): void {
    if (text === this.text) return;
    this.text = text;
    this.dismissedAt = undefined;
    this.chosen = false;
    this.refilter();
  }

  /** Highlights item `index` (e.g. under the mouse). */
  highlight(index: number): void {
    if (index >= 0 && index < this.matches.length) this.active = index;
  }

  /** Closes the list until the text changes. */
  close(): void {
    this.dismissedAt = this.text;
  }

  /** Picks item `index` (default: the highlighted one): the input's new text, and the list closes. */
  pick(index = this.active): string | undefined {
    const item = this.isOpen ? this.matches[index] : undefined;
    if (!item) return undefined;
    return this.accept(item.text);
  }

  /**
   * A key pressed in the input. Arrows move the highlight (wrapping at both ends), Tab and
   * Enter pick, Escape closes. Enter on text that is a command already does not pick: the list
   * closes and the key is left to the input, which sends it. That is a name typed out in full
   * (`/status`), nothing of the argument yet (`/model `), or a value typed out in full, or its
   * name after the provider when one value alone has it (`/model fast` for `local:fast`, which
   * the harness takes as it is): picking would only have spelled it out, and the message
   * typed next would have been added to the command instead of going to the new model. Once the
   * arrows have moved the highlight, Enter picks what they chose.
   */
  key(key: string): KeyOutcome {
    if (!this.isOpen) return { handled: false };
    const count = this.matches.length;
    switch (key as CompletionKey) {
      case 'ArrowDown':
        this.active = (this.active + 1) % count;
        this.chosen = true;
        return { handled: true };
      case 'ArrowUp':
        this.active = (this.active - 1 + count) % count;
        this.chosen = true;
        return { handled: true };
      case 'Tab':
        return { handled: true, text: this.pick() };
      case 'Enter':
        if (this.text === this.matches[this.active]?.text.trimEnd() || (!this.chosen && this.isComplete())) {
          this.close();
          return { handled: false };
        }
        return { handled: true, text: this.pick() };
      case 'Escape':
        this.close();
        return { handled: true };
      default:
        return { handled: false };
    }
  }

  /** Whether the text is a command as it stands (see `key`). */
  private isComplete(): boolean {
    const typed = this.argumentTyped;
    if (typed === undefined) return this.matches.some((item) => this.text === item.text.trimEnd());
    if (typed === '' || this.argumentValues.some((v) => v.value === typed)) return true;
    return this.argumentValues.filter((v) => v.value.slice(v.value.indexOf(':') + 1) === typed).length === 1;
  }

  private accept(text: string): string {
    this.update(text);
    return text;
  }

  private refilter(): void {
    const previous = this.matches[this.active]?.name;
    this.argumentTyped = undefined;
    this.argumentValues = [];
    this.matches = this.commandMatches() ?? this.argumentMatches() ?? [];
    // Keep the highlighted command while it still matches; otherwise start at the top.
    const kept = this.matches.findIndex((c) => c.name === previous);
    this.active = kept >= 0 ? kept : 0;
  }

  /** While a command's name is typed: the commands it starts. */
  private commandMatches(): CompletionItem[] | undefined {
    const match = /^\/(\S*)$/.exec(this.text);
    if (!match) return undefined;
    const typed = match[1]!.toLowerCase();
    return this.commands
      .filter((c) => c.name.toLowerCase().startsWith(typed))
      .map((c) => ({
        name: c.name,
        label: `/${c.name}`,
        hint: c.argumentHint,
        description: c.description,
        text: `/${c.name} `,
      }));
  }

  /** After a command's name: the values the card lists for the argument being typed. */
  private argumentMatches(): CompletionItem[] | undefined {
    const match = /^\/([a-z][a-z0-9-]*)[ \t]+(.*)$/.exec(this.text);
    const command = match && this.commands.find((c) => c.name === match[1]);
    if (!match || !command?.argumentValues) return undefined;
    const words = match[2]!.split(/[ \t]+/);
    const typed = words.at(-1)!;
    const values = command.argumentValues[words.length - 1] ?? [];
    const head = this.text.slice(0, this.text.length - typed.length);
    this.argumentTyped = typed;
    this.argumentValues = values;
    return matchingValues(values, typed).map((v) => ({
      name: v.value,
      label: v.value,
      hint: '',
      description: v.description ?? '',
      text: `${head}${v.value} `,
    }));
  }
}
