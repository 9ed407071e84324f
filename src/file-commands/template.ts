/**
 * The prompt template of a command file. The language is deliberately tiny, so that a file
 * reads the same to its author and to the harness:
 *
 * - `$ARGUMENTS` is the whole argument text, as the user typed it after the name (trimmed;
 *   line breaks kept); "" when there are none;
 * - `$1` to `$9` are its white-space-separated words (spaces, tabs and line breaks all
 *   separate); "" when there are fewer words;
 * - nothing else is special: `$10` is `$1` followed by `0`, `$0`, `$$`, `${1}` and `$name`
 *   stay as they are, and there is no escape. Arguments are inserted once, never expanded
 *   again, so a user who types `$1` gets `$1`.
 *
 * A template without placeholders ignores the arguments.
 *
 * A template that repeats `$ARGUMENTS` multiplies the arguments' size: a caller bounds the
 * result with {@link expandedLength} before building it (see `MAX_PROMPT_CHARS`).
 */

/** The placeholders, in one expression so that each is replaced in a single pass. */
const PLACEHOLDER = /\$(ARGUMENTS|[1-9])/g;

/**
 * The most characters a file command's expanded prompt may have: about 50,000 tokens, the
 * same as the default `contextChars`, far more than any sensible prompt and far less than the
 * arguments one request may carry times the placeholders one file may hold.
 */
export const MAX_PROMPT_CHARS = 200_000;

/** The white-space-separated words of the argument text; `$1` is `words(args)[0]`. */
export function argumentWords(args: string): string[] {
  return args.split(/\s+/).filter((word) => word !== '');
}

/** What one placeholder stands for. */
function valueOf(which: string, args: string, words: readonly string[]): string {
  return which === 'ARGUMENTS' ? args : (words[Number(which) - 1] ?? '');
}

/** The template with every placeholder replaced by the arguments it names. */
export function expandTemplate(template: string, args: string): string {
  const words = argumentWords(args);
  return template.replace(PLACEHOLDER, (_match, which: string) => valueOf(which, args, words));
}

/** The length `expandTemplate(template, args)` would have, computed without building it. */
export function expandedLength(template: string, args: string): number {
  const words = argumentWords(args);
  let length = template.length;
  for (const match of template.matchAll(PLACEHOLDER))
    length += valueOf(match[1]!, args, words).length - match[0].length;
  return length;
}
