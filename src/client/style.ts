/** The terminal clients' colors, shared by what renders replies and what draws conversation marks. */
/** Terminal colors, off when the stream is not a terminal or NO_COLOR is set. */
export interface Style {
  /** Whether the stream is a terminal that shows styles (then replies are rendered as Markdown too). */
  colors: boolean;
  command(text: string): string;
  subtask(text: string): string;
  error(text: string): string;
  dim(text: string): string;
}

export function styleFor(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): Style {
  const on = stream.isTTY === true && !env.NO_COLOR;
  const paint = (code: number) => (text: string) => (on ? `\x1b[${code}m${text}\x1b[0m` : text);
  return { colors: on, command: paint(36), subtask: paint(35), error: paint(31), dim: paint(2) };
}
