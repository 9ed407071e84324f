/** Reading the config file: no file, a good file, a missing or broken one, an invalid one. */
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { loadConfig } from '../../src/config/load.js';
import { defaultConfig } from '../../src/config/schema.js';
import { HarnessError } from '../../src/errors.js';

let dir: string;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'harness-config-'));
});
after(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function write(name: string, text: string): Promise<string> {
  const file = join(dir, name);
  await writeFile(file, text);
  return file;
}

async function failure(file: string): Promise<HarnessError> {
  const error = await loadConfig(file).then(
    () => assert.fail('expected an error'),
    (error: unknown) => error,
  );
  assert.ok(error instanceof HarnessError);
  return error;
}

describe('loadConfig', () => {
  it('gives the defaults without a file', async () => {
    assert.deepEqual(await loadConfig(), defaultConfig());
  });

  it('reads and validates a file', async () => {
    const file = await write(
      'good.json',
      JSON.stringify({
        defaultModel: 'local:small',
        providers: { local: { type: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1', models: ['small'] } },
      }),
    );
    const config = await loadConfig(file);
    assert.equal(config.defaultModel, 'local:small');
    assert.deepEqual(config.providers.local?.models, ['small']);
    assert.equal(config.turnEndState, 'input-required');
  });

  it('reports a missing file as config_unreadable, naming it', async () => {
    const file = join(dir, 'missing.json');
    const error = await failure(file);
    assert.equal(error.code, 'config_unreadable');
    assert.match(error.message, /Cannot read the config file ".*missing\.json": it does not exist/);
    assert.equal((await failure(dir)).code, 'config_unreadable');
  });

  it('reports bad JSON with a position, never quoting the text', async () => {
    const file = await write('broken.json', '{\n  "providers": {},\n  "apiKey": sk-live-123456\n}');
    const error = await failure(file);
    assert.equal(error.code, 'config_unreadable');
    assert.match(error.message, /broken\.json" is not valid JSON/);
    assert.doesNotMatch(error.message, /sk-live-123456/);
    const truncated = await failure(await write('truncated.json', '{\n  "providers": {'));
    assert.match(truncated.message, /not valid JSON \(line 2, column 17\)/);
  });

  it('reports a schema problem as config_invalid with the file and the key path', async () => {
    const file = await write(
      'bad.json',
      JSON.stringify({ providers: { local: { type: 'openai-compatible', baseURL: 'localhost' } } }),
    );
    const error = await failure(file);
    assert.equal(error.code, 'config_invalid');
    assert.match(error.message, /bad\.json" is invalid: providers\.local\.baseURL: Invalid URL/);
  });
});
