export { McpTools, type McpToolsOptions } from './mcp-tools.js';
export { normalizeToolName, ToolNamer } from './names.js';
export type { ToolBox, ToolEntry, ToolOutcome } from './tool-box.js';
