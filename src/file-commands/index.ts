/**
 * Commands as files: every `*.md` file in a commands folder is a slash command named after
 * the file, whose body is a prompt template run as a sub-task (see the README, "Commands as
 * files"). Users add, change and remove commands without writing code or restarting.
 */
export { CommandFolder, type CommandFolderOptions } from './folder.js';
export { fileCommandDefinition, type FileCommand } from './file-command.js';
export { COMMAND_FILE_EXTENSION, isCommandFileName, loadCommandFiles, type LoadCommandFilesOptions, type LoadedCommandFiles } from './load.js';
export { FRONT_MATTER_KEYS, MODEL_ID_PATTERN, parseCommandFile, splitFrontMatter, type CommandFileContent, type CommandFileParse, type FrontMatterSplit } from './front-matter.js';
export { argumentWords, expandTemplate } from './template.js';
