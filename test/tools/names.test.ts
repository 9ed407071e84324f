/** The rule that names tools for the model (docs/tools.md, "Names"). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizeToolName, ToolNamer } from '../../src/tools/index.js';

describe('tool names', () => {
  it('are <server>_<tool>, with characters outside [A-Za-z0-9_-] made "_" and at most 64 long', () => {
    assert.equal(normalizeToolName('fs', 'read_file'), 'fs_read_file');
    assert.equal(normalizeToolName('web', 'search.v2 beta'), 'web_search_v2_beta');
    assert.equal(normalizeToolName('s', 'x'.repeat(100)).length, 64);
  });

  it('are unique: a name taken gets _2, _3, in order, still within 64', () => {
    const namer = new ToolNamer();
    assert.equal(namer.name('a_b', 'c'), 'a_b_c');
    assert.equal(namer.name('a', 'b_c'), 'a_b_c_2');
    assert.equal(namer.name('a', 'b.c'), 'a_b_c_3');
    const long = 'y'.repeat(100);
    assert.equal(namer.name('s', long), `s_${long}`.slice(0, 64));
    const second = namer.name('s', long);
    assert.equal(second.length, 64);
    assert.match(second, /_2$/);
  });
});
