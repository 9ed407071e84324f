/**
 * Skills for the model: one tool, `skill`, whose description lists every skill's name and
 * description. The description, not the system prompt, carries the list: it goes with the
 * tools wherever they go (`allowed-tools` can leave it out), and it changes when the folder
 * does without touching the conversation's cached prefix of instructions. The model reads a
 * skill's body, or one of its files, only when it decides the skill applies.
 */
import type { ToolDirectory } from '../commands/index.js';
import { splitOutput } from '../tools/output.js';
import type { ToolBox, ToolEntry, ToolList, ToolOutcome } from '../tools/tool-box.js';
import { readSkillFile, type Skill } from './load.js';

export const SKILL_TOOL_NAME = 'skill';
/** The `server` of the entry, as `/tools` and traces show it. */
export const SKILLS_SERVER = 'skills';

/** `outputChars`: what the model is given of a long file (`toolOutputChars`); the task keeps the whole as an artifact. */
export function skillToolEntry(skills: readonly Skill[], outputChars: number): ToolEntry {
  const byName = new Map(skills.map((skill) => [skill.name, skill]));
  const listing = skills.map((skill) => `- ${skill.name}: ${skill.description}`).join('\n');
  return {
    name: SKILL_TOOL_NAME,
    server: SKILLS_SERVER,
    tool: SKILL_TOOL_NAME,
    description:
      'Reads a skill: instructions for a kind of work. When one of the skills below applies to the task, ' +
      'call this with its name first and follow what it says; give `file` to read one of the files its ' +
      `instructions name (a path inside the skill's folder).\n\nSkills:\n${listing}`,
    inputSchema: {
      type: 'object',
      properties: {
        name: { type: 'string', enum: skills.map((skill) => skill.name), description: 'The skill.' },
        file: {
          type: 'string',
          description: "A file of the skill, relative to its folder; leave out for SKILL.md's instructions.",
        },
      },
      required: ['name'],
      additionalProperties: false,
    },
    needsApproval: false,
    call: async (input: unknown): Promise<ToolOutcome> => {
      const { name, file } = (input ?? {}) as { name?: unknown; file?: unknown };
      const skill = typeof name === 'string' ? byName.get(name) : undefined;
      if (!skill) {
        return {
          status: 'failed',
          output: `There is no skill named ${JSON.stringify(name)}. Skills: ${[...byName.keys()].join(', ')}.`,
        };
      }
      if (file === undefined || file === '') return { status: 'succeeded', ...splitOutput(skill.body, outputChars) };
      if (typeof file !== 'string') return { status: 'failed', output: '"file" must be a path, as a string.' };
      const read = await readSkillFile(skill.dir, file);
      return read.ok
        ? { status: 'succeeded', ...splitOutput(read.text, outputChars) }
        : { status: 'failed', output: `Not read: ${read.problem}.` };
    },
  };
}

/** `tools` with the `skill` tool added while there are skills. */
export function withSkillTool(tools: ToolBox, skills: () => readonly Skill[], outputChars: number): ToolBox {
  return {
    async list(signal, turn): Promise<ToolList> {
      const listed = await tools.list(signal, turn);
      const now = skills();
      if (now.length === 0) return listed;
      return { ...listed, tools: [...listed.tools, skillToolEntry(now, outputChars)] };
    },
    close: () => tools.close(),
  };
}

/** What `/tools` lists: `directory`'s servers, then the `skill` tool as the server `skills` while there are skills. */
export function withSkillServer(directory: ToolDirectory | undefined, skills: () => readonly Skill[]): ToolDirectory {
  return {
    servers() {
      const listed = directory?.servers() ?? [];
      const now = skills();
      if (now.length === 0) return listed;
      const { name, description } = skillToolEntry(now, 0);
      const tools = [{ name, description, asks: false }];
      return [...listed, { name: SKILLS_SERVER, connecting: false, connected: true, tools }];
    },
  };
}
