import type { CommandDefinition } from '@tiny-harness/commands-extension';
import type { ContextReport, ContextReporter } from './ports.js';

/** The cells of the bar that shows how full the budget is. */
const BAR_CELLS = 20;

const PART_NAMES: Record<keyof ContextReport['parts'], string> = {
  systemPrompt: 'system prompt',
  instructions: 'instructions',
  tools: 'tool definitions',
  summary: 'summary',
  history: 'history',
};

/** `/context`: what the next turn would send its model, part by part, and how full its budget is. */
export function contextCommand(reporter: ContextReporter): CommandDefinition {
  return {
    name: 'context',
    description: "Show what the next turn would send the model, and how full the model's budget is",
    handler: async ({ task, callContext }) => {
      const report = await reporter.report(task, callContext);
      return { text: contextText(report), data: { ...report } };
    },
  };
}

function contextText(report: ContextReport): string {
  const number = (value: number) => value.toLocaleString('en-US');
  const width = Math.max(...Object.values(report.parts).map((chars) => number(chars).length));
  const lines = Object.entries(PART_NAMES).map(
    ([key, name]) =>
      `  ${`${name}:`.padEnd(18)}${number(report.parts[key as keyof ContextReport['parts']]).padStart(width)} characters`,
  );
  const total =
    report.budgetChars > 0
      ? `${number(report.usedChars)} of the model's ${number(report.budgetChars)} characters (${Math.round((100 * report.usedChars) / report.budgetChars)}%) ${bar(report.share)}`
      : `${number(report.usedChars)} characters (no budget)`;
  const tokens = report.tokens
    ? `\nThe last turn's input was ${number(report.tokens.input)} tokens, as ${report.tokens.model} counted them.`
    : '';
  return `The next turn would send ${report.model}:\n${lines.join('\n')}\nIn all: ${total}${tokens}`;
}

/** `[#####...............]`: the share of 20 cells filled, at least one for any use. */
function bar(share: number): string {
  const filled = Math.min(BAR_CELLS, share > 0 ? Math.max(1, Math.round(share * BAR_CELLS)) : 0);
  return `[${'#'.repeat(filled)}${'.'.repeat(BAR_CELLS - filled)}]`;
}
