export { McpTools, PromptUnavailable, type McpToolsOptions, type PromptEntry } from './mcp-tools.js';
export { normalizeToolName, ToolNamer } from './names.js';
export {
  missingToolsText,
  type MissingServer,
  type ToolBox,
  type ToolEntry,
  type ToolList,
  type ToolOutcome,
  type ToolTurn,
  type AskUser,
  type UserAnswer,
  type UserQuestion,
} from './tool-box.js';
export { allowedBy, allowedEntries, mayAllowServer } from './allowed.js';
export { openWorkspace, WorkspaceTools, WORKSPACE_SERVER, type BuiltinTool } from './workspace-tools.js';
