/** "Did you mean": the name closest to what was typed, within two edits, the first listed on a tie. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { closestName } from '../src/wire.js';

describe('closestName', () => {
  it('suggests the name within two edits, swapped letters included', () => {
    assert.equal(closestName('modle', ['help', 'model', 'status']), 'model');
    assert.equal(closestName('stauts', ['help', 'model', 'status']), 'status');
    assert.equal(closestName('hlp', ['help', 'model']), 'help');
  });

  it('suggests nothing past two edits, or from no names', () => {
    assert.equal(closestName('approve', ['help', 'model']), undefined);
    assert.equal(closestName('model', []), undefined);
  });

  it('on a tie, the first in the order given', () => {
    assert.equal(closestName('cat', ['bat', 'hat']), 'bat');
    assert.equal(closestName('cat', ['hat', 'bat']), 'hat');
  });
});
