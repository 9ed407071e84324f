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
 */

/** The placeholders, in one expression so that each is replaced in a single pass. */
const PLACEHOLDER = /\$(ARGUMENTS|[1-9])/g;

/** The white-space-separated words of the argument text; `$1` is `words(args)[0]`. */
export function argumentWords(args: string): string[] {
  return args.split(/\s+/).filter((word) => word !== '');
}

/** The template with every placeholder replaced by the arguments it names. */
export function expandTemplate(template: string, args: string): string {
  const words = argumentWords(args);
  return template.replace(PLACEHOLDER, (_match, which: string) => (which === 'ARGUMENTS' ? args : (words[Number(which) - 1] ?? '')));
}
