/** The catalog: ids, the first-colon split, the default rules, unknown ids. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { createBuiltinProvider } from '../../src/models/builtin.js';
import { chooseDefaultModel, ModelCatalog, splitModelId, type CatalogEntry } from '../../src/models/catalog.js';
import { HarnessError } from '../../src/errors.js';

const builtin: CatalogEntry[] = [
  { id: 'builtin:echo', provider: 'builtin', model: 'echo' },
  { id: 'builtin:stats', provider: 'builtin', model: 'stats' },
];
const local: CatalogEntry[] = [
  { id: 'local:llama3.2:3b', provider: 'local', model: 'llama3.2:3b' },
  { id: 'local:qwen', provider: 'local', model: 'qwen' },
];
const providers = {
  builtin: createBuiltinProvider(),
  local: createOpenAICompatible({ name: 'local', baseURL: 'http://127.0.0.1:1/v1' }),
};

describe('splitModelId', () => {
  it('splits at the first colon', () => {
    assert.deepEqual(splitModelId('local:llama3.2:3b'), { provider: 'local', model: 'llama3.2:3b' });
    assert.deepEqual(splitModelId('builtin:echo'), { provider: 'builtin', model: 'echo' });
    assert.equal(splitModelId('echo'), undefined);
    assert.equal(splitModelId(':echo'), undefined);
    assert.equal(splitModelId('local:'), undefined);
  });
});

describe('chooseDefaultModel', () => {
  it('takes the configured model when it is offered', () => {
    assert.equal(chooseDefaultModel([...builtin, ...local], 'local:qwen'), 'local:qwen');
    assert.equal(chooseDefaultModel([...builtin, ...local], 'builtin:stats'), 'builtin:stats');
  });

  it('otherwise the first real model, otherwise builtin:echo', () => {
    assert.equal(chooseDefaultModel([...builtin, ...local]), 'local:llama3.2:3b');
    assert.equal(chooseDefaultModel(builtin), 'builtin:echo');
  });

  it('refuses a configured model that is not offered, listing what is and why', () => {
    assert.throws(
      () =>
        chooseDefaultModel([...builtin, ...local], 'remote:big', {
          remote: 'the server at http://h/v1 refused the connection',
        }),
      (error: unknown) =>
        error instanceof HarnessError &&
        error.code === 'config_invalid' &&
        error.message ===
          'defaultModel "remote:big" is not offered (the server at http://h/v1 refused the connection). Offered: builtin:echo, builtin:stats, local:llama3.2:3b, local:qwen.',
    );
  });
});

describe('ModelCatalog', () => {
  const catalog = new ModelCatalog({ entries: [...builtin, ...local, local[0]!], providers, notes: ['a note'] });

  it('lists each offered model once, in order, and knows them', () => {
    assert.deepEqual(
      catalog.list().map((entry) => entry.id),
      ['builtin:echo', 'builtin:stats', 'local:llama3.2:3b', 'local:qwen'],
    );
    assert.equal(catalog.has('local:llama3.2:3b'), true);
    assert.equal(catalog.has('local:llama3.2'), false);
    assert.equal(catalog.defaultModel, 'local:llama3.2:3b');
  });

  it('resolves an id to a model of the right provider, split at the first colon', () => {
    const model = catalog.resolve('local:llama3.2:3b');
    assert.equal(model.specificationVersion, 'v3');
    assert.equal(model.modelId, 'llama3.2:3b');
    assert.equal(model.provider, 'local.chat');
    assert.equal(catalog.resolve('builtin:echo').provider, 'builtin');
  });

  it('refuses an unknown id with model_unknown, listing the choices', () => {
    for (const id of ['local:nope', 'nope', 'other:qwen']) {
      assert.throws(
        () => catalog.resolve(id),
        (error: unknown) =>
          error instanceof HarnessError &&
          error.code === 'model_unknown' &&
          error.message ===
            `Unknown model "${id}". Choose one of: builtin:echo, builtin:stats, local:llama3.2:3b, local:qwen.`,
      );
    }
  });

  it('summarises the models, marking the default', () => {
    const summary = catalog.summary();
    assert.match(summary, /^Models offered \(\* default: local:llama3\.2:3b\):/);
    assert.match(summary, /\n {2}\* local:llama3\.2:3b\n/);
    assert.match(summary, /Notes:\n {2}- a note$/);
  });

  it('needs a provider object for each provider it offers', () => {
    assert.throws(
      () => new ModelCatalog({ entries: local, providers: { builtin: providers.builtin } }),
      /no provider object for "local"/,
    );
  });
});
