/**
 * Embedding the harness with a command of your own: `/roll [<sides>]` rolls a die on the
 * harness, never reaching the model. Run it with:
 *
 *   node --import tsx examples/custom-command.ts
 *
 * then send `/roll 20` to http://127.0.0.1:8080 (see the README for a curl line).
 */
import { randomInt } from 'node:crypto';
import { CommandUsageError, createLogger, defaultConfig, startHarness, type CommandDefinition } from '../src/index.js';

export const rollCommand: CommandDefinition = {
  name: 'roll',
  description: 'Roll a die on the harness',
  argumentHint: '[<sides>]',
  handler: ({ args }) => {
    const sides = args === '' ? 6 : Number(args);
    if (!Number.isInteger(sides) || sides < 2 || sides > 1000) {
      // A usage error is sent back to the user as the reply, as it is.
      throw new CommandUsageError(`"${args}" is not a number of sides; try /roll or /roll 20 (2 to 1000).`);
    }
    const value = randomInt(1, sides + 1);
    // `text` is the reply's first part; `data` becomes a data part after it.
    return { text: `You rolled ${value} (d${sides}).`, data: { sides, value } };
  },
};

if (import.meta.url === `file://${process.argv[1]}`) {
  const harness = await startHarness({
    config: defaultConfig(),
    dataDir: './.tiny-harness',
    host: '127.0.0.1',
    port: 8080,
    log: createLogger(),
    commands: (registry) => registry.register(rollCommand),
  });
  console.log(`listening on ${harness.url}`);
  process.once('SIGINT', () => void harness.close());
}
