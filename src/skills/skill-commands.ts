/**
 * Skills for people: `/skills` lists them, and `/<skill-name> args` puts one in the turn, as a
 * command file runs inline (CMD-38): the skill's body with the arguments is the turn's input,
 * marked as the command's.
 */
import { CommandUsageError, type CommandDefinition, type CommandResult } from '../commands/index.js';
import type { CommandStarter } from '../engine-ports.js';
import { inlineResult } from '../file-commands/inline.js';
import { expandedLength, expandTemplate, MAX_PROMPT_CHARS } from '../file-commands/template.js';
import type { Skill } from './load.js';

/** What `/skills` reads: the skills loaded now, and the folders skipped (with why). */
export interface SkillsNow {
  list(): readonly Skill[];
  skipped(): readonly string[];
}

export function skillsCommand(skills: SkillsNow): CommandDefinition {
  return {
    name: 'skills',
    description: 'List the skills the model may use, from the skills folder',
    handler: (): CommandResult => {
      const list = skills.list().map(({ name, description }) => ({ name, description }));
      const skipped = [...skills.skipped()];
      const lines = list.length === 0 ? ['No skills.'] : list.map((s) => `/${s.name}: ${s.description}`);
      if (skipped.length > 0) lines.push('', 'Skipped:', ...skipped.map((line) => `  ${line}`));
      return { text: lines.join('\n'), data: { skills: list, skipped } };
    },
  };
}

/**
 * The prompt a `/<skill-name> args` turn works on: the body, its `$ARGUMENTS` and
 * `$1`..`$9` filled in; without placeholders, the arguments follow the body.
 */
export function skillInstruction(skill: Skill, args: string): string {
  const body =
    /\$(ARGUMENTS|[1-9])/.test(skill.body) || args === '' ? skill.body : `${skill.body}\n\nARGUMENTS: $ARGUMENTS`;
  const length = expandedLength(body, args);
  if (length > MAX_PROMPT_CHARS) {
    throw new CommandUsageError(
      `/${skill.name} with these arguments would make a prompt of ${length.toLocaleString('en-US')} characters, over the limit of ` +
        `${MAX_PROMPT_CHARS.toLocaleString('en-US')}: give shorter arguments.`,
    );
  }
  return expandTemplate(body, args);
}

export function skillCommand(skill: Skill, starter: CommandStarter): CommandDefinition {
  const label = `/${skill.name}`;
  return {
    name: skill.name,
    description: `${skill.description} (skill)`,
    handler: async ({ args, task, callContext, message }): Promise<CommandResult> => {
      const turn = await starter.prepare(task, skillInstruction(skill, args), { callContext, label, message });
      return inlineResult(label, turn);
    },
  };
}
