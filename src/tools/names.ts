/**
 * The rule that names a server's tools for the model. Models (OpenAI's and Anthropic's APIs
 * alike) take function names of 1 to 64 characters from `[A-Za-z0-9_-]`, and two servers may
 * both offer `search`. So a tool is offered as `<server>_<tool>`:
 *
 * 1. every character of the tool's name outside `[A-Za-z0-9_-]` becomes `_`;
 * 2. the whole name is cut to 64 characters;
 * 3. a name already taken (two tools that normalize alike, or `a_b` + `c` against `a` + `b_c`)
 *    gets `_2`, `_3`, ... (cut so that it still fits), in the order of the config file, then
 *    of each server's list.
 */
const MAX_NAME = 64;

export function normalizeToolName(server: string, tool: string): string {
  return `${server}_${tool.replace(/[^A-Za-z0-9_-]/g, '_')}`.slice(0, MAX_NAME);
}

/** Hands out unique names, in call order. */
export class ToolNamer {
  private readonly taken = new Set<string>();

  name(server: string, tool: string): string {
    const base = normalizeToolName(server, tool);
    let name = base;
    for (let n = 2; this.taken.has(name); n++) name = `${base.slice(0, MAX_NAME - String(n).length - 1)}_${n}`;
    this.taken.add(name);
    return name;
  }
}
