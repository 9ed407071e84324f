/**
 * `/context`: what the next turn of a task would send its model, built as the turn builds it
 * (`buildConversation`, CMD-36) from the executor's own inputs, part by part, with the tools the
 * turn would offer, the model's budget, and the provider's count of the last turn's input.
 */
import type { Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { ContextReport, ContextReporter } from '../commands/index.js';
import { buildConversation } from '../conversation/build.js';
import { allowedEntries, type ToolEntry } from '../tools/index.js';
import { agentRunOf, allowedToolsOf } from './agent-run.js';
import type { HarnessExecutor } from './executor.js';

export class ContextReports implements ContextReporter {
  constructor(private readonly inputs: HarnessExecutor['requestInputs']) {}

  async report(task: Task, callContext: ServerCallContext): Promise<ContextReport> {
    const { models, state, systemPrompt, instructions, contextCharsFor, earlier, tools } = this.inputs;
    const model = await models.modelFor(task, callContext);
    const [before, listed, last] = await Promise.all([
      earlier ? earlier(task, callContext) : [],
      tools?.list(undefined, { taskId: task.id, contextId: task.contextId, metadata: task.metadata, callContext }),
      state.getLastUsage(task.id),
    ]);
    const budgetChars = contextCharsFor?.(model);
    const conversation = buildConversation({
      systemPrompt: agentRunOf(task.metadata)?.systemPrompt ?? systemPrompt,
      instructions: instructions?.(),
      history: [...before, ...task.history],
      budgetChars,
    });
    const parts = {
      ...conversation.sizes,
      tools: toolChars(allowedEntries(listed?.tools ?? [], allowedToolsOf(task.metadata))),
    };
    const usedChars = parts.systemPrompt + parts.instructions + parts.tools + parts.summary + parts.history;
    return {
      model,
      budgetChars: budgetChars ?? 0,
      usedChars,
      // The tool definitions are not in the budget the conversation is cut to: the whole may pass it.
      share: budgetChars ? Math.min(1, usedChars / budgetChars) : 0,
      parts: {
        systemPrompt: parts.systemPrompt,
        instructions: parts.instructions,
        tools: parts.tools,
        summary: parts.summary,
        history: parts.history,
      },
      // A provider that does not count says 0: unknown, not an empty request.
      ...(last && last.inputTokens > 0 ? { tokens: { input: last.inputTokens, model: last.model } } : {}),
    };
  }
}

/** What the tool definitions weigh: each one's name, description and input schema, as JSON. */
function toolChars(tools: readonly ToolEntry[]): number {
  return tools.reduce(
    (sum, tool) =>
      sum + JSON.stringify({ name: tool.name, description: tool.description, inputSchema: tool.inputSchema }).length,
    0,
  );
}
