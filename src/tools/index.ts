export { McpTools, PromptUnavailable, type McpToolsOptions, type PromptEntry } from './mcp-tools.js';
export { normalizeToolName, ToolNamer } from './names.js';
export type { ToolBox, ToolEntry, ToolOutcome } from './tool-box.js';
export { allowedBy, allowedEntries } from './allowed.js';
