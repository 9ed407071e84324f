import type { CommandDefinition } from '@tiny-harness/commands-extension';
import type { InstructionFileListing } from './ports.js';
import type { InstructionFiles } from './ports.js';

const HOW_TO_ADD =
  'Instruction files are listed under "instructions" in the config file (a list of paths, read from the folder the harness starts in; AGENTS.md by default).';

/** How one file stands, in the words of `/memory`. */
function standing(file: InstructionFileListing, maxChars: number): string {
  switch (file.status) {
    case 'loaded':
      return `${file.chars.toLocaleString('en')} characters, loaded`;
    case 'too-large':
      return `${file.chars.toLocaleString('en')} characters, too large (the most is ${maxChars.toLocaleString('en')}, "instructionsMaxChars"): left out`;
    case 'missing':
      return file.problem ? `cannot be read (${file.problem}): left out` : 'missing: skipped';
  }
}

/** `/memory`: the instruction files sent after the system prompt, in order, each with its size and whether it is loaded. */
export function memoryCommand(files: InstructionFiles): CommandDefinition {
  return {
    name: 'memory',
    description: 'List the instruction files sent to the model, with their sizes',
    handler: () => {
      const listing = files.listing();
      const lines = listing.length
        ? [
            'Instruction files, sent after the system prompt in this order:',
            ...listing.map((file) => `  ${file.path}: ${standing(file, files.maxChars)}`),
          ]
        : ['No instruction files are configured.'];
      if (!listing.some((file) => file.status === 'loaded')) lines.push(HOW_TO_ADD);
      return { text: lines.join('\n'), data: { files: listing } };
    },
  };
}
