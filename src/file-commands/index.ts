/**
 * Commands as files: every `*.md` file in a commands folder is a slash command named after
 * the file, whose body is a prompt template run as a sub-task (see docs/commands.md, "Commands as
 * files"). Users add, change and remove commands without writing code or restarting.
 */
export { CommandFolder, type CommandFolderOptions } from './folder.js';
export { fileCommandDefinition, type FileCommand } from './file-command.js';
export {
  COMMAND_FILE_EXTENSION,
  isCommandFileName,
  loadCommandFiles,
  MAX_COMMAND_FILE_BYTES,
  MAX_COMMAND_FILES,
  type LoadCommandFilesOptions,
  type LoadedCommandFiles,
} from './load.js';
export {
  FRONT_MATTER_KEYS,
  MODEL_ID_PATTERN,
  parseCommandFile,
  splitFrontMatter,
  type CommandFileContent,
  type CommandFileParse,
  type FrontMatterSplit,
} from './front-matter.js';
export { argumentWords, expandedLength, expandTemplate, MAX_PROMPT_CHARS } from './template.js';
