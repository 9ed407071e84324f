/** docs/configuration.md's table of keys, generated from the zod schema by scripts/config-docs.ts. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { BEGIN_MARKER, CONFIG_DOC, configRows, END_MARKER, withCurrentTable } from '../../scripts/config-docs.js';
import { configSchema } from '../../src/config/schema.js';

describe('the configuration reference', () => {
  it('docs/configuration.md is current with the schema', () => {
    const doc = readFileSync(CONFIG_DOC, 'utf8');
    assert.ok(
      doc === withCurrentTable(doc),
      'docs/configuration.md differs from what the schema (src/config/schema.ts) gives: run npm run docs:config',
    );
  });

  it('every key of the schema has a row with a type and a description', () => {
    const rows = configRows();
    const topLevel = new Set(rows.map((row) => row.key.split('.')[0]));
    assert.deepEqual([...topLevel], Object.keys(configSchema.shape));
    for (const row of rows) {
      assert.ok(row.type, `${row.key} has a type`);
      assert.ok(row.description, `${row.key} has a description: add .describe(...) in the schema`);
    }
    const byKey = new Map(rows.map((row) => [row.key, row]));
    assert.deepEqual(
      ['maxSteps', 'push.timeoutMs', 'mcpServers', 'providers.NAME.apiKeyEnv', 'mcpServers.NAME.command'].map((key) => [
        key,
        byKey.get(key)?.default,
      ]),
      [
        ['maxSteps', '`20`'],
        ['push.timeoutMs', '`10000`'],
        ['mcpServers', '`{}`'],
        ['providers.NAME.apiKeyEnv', '`OPENAI_API_KEY` for `openai`; `ANTHROPIC_API_KEY` for `anthropic`'],
        ['mcpServers.NAME.command', ''],
      ],
    );
    assert.equal(byKey.get('mcpServers.NAME.command')?.type, 'string (`stdio` only)');
    assert.equal(byKey.get('durability')?.type, '`normal` or `full`');
  });

  it('only the text between the markers is replaced; a missing marker is an error', () => {
    const doc = `# Hand-written\n\n${BEGIN_MARKER}\n| an old table |\n${END_MARKER}\n\nMore by hand.\n`;
    const next = withCurrentTable(doc);
    assert.ok(next.startsWith(`# Hand-written\n\n${BEGIN_MARKER}\n\n| key | type | default | |`));
    assert.ok(next.endsWith(`|\n\n${END_MARKER}\n\nMore by hand.\n`));
    assert.ok(!next.includes('an old table'));
    assert.equal(withCurrentTable(next), next, 'writing it twice changes nothing');
    assert.throws(() => withCurrentTable('# no markers\n'), /must hold the markers/);
  });
});
