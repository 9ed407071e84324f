import { permissionsCommand } from './permissions.js';
import type { CommandRegistry } from '@tiny-harness/commands-extension';
import { approveCommand, denyCommand } from './approve.js';
import { compactCommand } from './compact.js';
import { helpCommand } from '@tiny-harness/commands-extension';
import { memoryCommand } from './memory.js';
import { modelCommand } from './model.js';
import { contextCommand } from './context.js';
import { forkCommand } from './fork.js';
import type {
  ConversationCompaction,
  InstructionFiles,
  ContextReporter,
  ForkControl,
  ConversationRewinds,
  ModelControl,
  ScheduleControl,
  SubtaskControl,
  TaskReporter,
  ToolApprovalControl,
  ToolDirectory,
  TurnControl,
} from './ports.js';
import { rewindCommand } from './rewind.js';
import { scheduleCommand, unscheduleCommand } from './schedule.js';
import { spawnCommand } from './spawn.js';
import { statusCommand } from './status.js';
import { stopCommand } from './stop.js';
import { toolsCommand } from './tools.js';

export { toolsCommand };

export type {
  CompactionAttempt,
  ConversationCompaction,
  InstructionFiles,
  InstructionFileListing,
  ContextReport,
  ContextReporter,
  ForkControl,
  ForkOutcome,
  ConversationPoint,
  ConversationRewinds,
  ModelChoice,
  ModelControl,
  ScheduleControl,
  ScheduleRequest,
  ScheduleView,
  SubtaskControl,
  TaskReport,
  TaskReporter,
  ToolApprovalControl,
  ToolDirectory,
  ToolServerReport,
  TurnControl,
  UsageLine,
} from './ports.js';

/**
 * Registers the built-in commands in their documented order: help, model, status, stop, spawn,
 * compact (given the compaction), rewind, fork, context, memory (given the instruction files),
 * schedule and unschedule (given the schedules),
 * then tools, approve and deny when tool servers are configured (a deployment without them is
 * not offered commands that could only say so).
 */
export function registerBuiltinCommands(
  registry: CommandRegistry,
  harness: {
    models: ModelControl;
    reporter: TaskReporter;
    turns: TurnControl;
    subtasks: SubtaskControl;
    /** Summarises conversations for `/compact` (CMD-36); without it, `/compact` is not offered. */
    compaction?: ConversationCompaction;
    /** The project's instruction files, which `/memory` lists. */
    instructions?: InstructionFiles;
    forks: ForkControl;
    context: ContextReporter;
    rewinds: ConversationRewinds;
    tools?: { directory: ToolDirectory; approvals: ToolApprovalControl };
    /** Schedules (issue 39); without them, `/schedule` and `/unschedule` are not offered. */
    schedules?: ScheduleControl;
    /** The command files skipped and why, which `/help` lists. */
    skippedFiles?: () => readonly string[];
    /** Whether a model runs the turns (default true); a hosted agent's get only `/help`, `/status` and `/stop`. */
    modelTurns?: boolean;
  },
): void {
  const modelTurns = harness.modelTurns !== false;
  registry.register(helpCommand(registry, harness.skippedFiles));
  if (modelTurns) registry.register(modelCommand(harness.models));
  registry.register(statusCommand(harness.reporter));
  registry.register(stopCommand(harness.turns));
  if (!modelTurns) return;
  registry.register(spawnCommand(harness.subtasks));
  if (harness.compaction) registry.register(compactCommand(harness.turns, harness.compaction));
  registry.register(rewindCommand(harness.turns, harness.rewinds));
  registry.register(forkCommand(harness.forks));
  registry.register(contextCommand(harness.context));
  if (harness.instructions) registry.register(memoryCommand(harness.instructions));
  if (harness.schedules) {
    registry.register(scheduleCommand(harness.schedules));
    registry.register(unscheduleCommand(harness.schedules));
  }
  if (!harness.tools) return;
  registry.register(toolsCommand(harness.tools.directory, harness.tools.approvals));
  registry.register(approveCommand(harness.tools.approvals));
  registry.register(denyCommand(harness.tools.approvals));
  registry.register(permissionsCommand(harness.tools.approvals));
}
