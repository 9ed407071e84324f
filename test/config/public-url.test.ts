/** The public addresses the card may name instead of the listening ones: what is accepted, how it is normalized, what is refused and why. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { checkPublicAddress, publicGrpcAddressSchema, publicUrlSchema } from '../../src/config/public-url.js';
import { HarnessError } from '../../src/errors.js';

function configProblem(config: unknown): string {
  try {
    parseConfig(JSON.stringify(config), 'harness.json');
  } catch (error) {
    assert.ok(error instanceof HarnessError && error.code === 'config_invalid');
    return error.message;
  }
  assert.fail('expected config_invalid');
}

describe('the public URL', () => {
  it('accepts http and https roots, with or without a path, and drops the trailing slash', () => {
    for (const [given, normalized] of [
      ['https://agent.example.com', 'https://agent.example.com'],
      ['https://agent.example.com/', 'https://agent.example.com'],
      ['https://Agent.Example.com:443/', 'https://agent.example.com'],
      ['http://10.0.0.5:8080', 'http://10.0.0.5:8080'],
      ['https://example.com/agent/', 'https://example.com/agent'],
      ['https://example.com/a/b//', 'https://example.com/a/b'],
      ['http://[::1]:8080/', 'http://[::1]:8080'],
    ]) {
      assert.deepEqual(checkPublicAddress(publicUrlSchema, given!), { value: normalized }, given);
    }
  });

  it('refuses anything else, saying what is wrong without repeating the value', () => {
    for (const [given, problem] of [
      ['agent.example.com', 'must be an absolute URL such as https://agent.example.com'],
      ['/agent', 'must be an absolute URL such as https://agent.example.com'],
      ['ftp://agent.example.com', 'must start with http:// or https://'],
      ['ws://agent.example.com', 'must start with http:// or https://'],
      ['https://alice:s3cret@agent.example.com', 'must not contain a user name or password'],
      [
        'https://agent.example.com/?tenant=a',
        'must not have a query (?...) or a fragment (#...): give the address of the harness root',
      ],
      [
        'https://agent.example.com/#top',
        'must not have a query (?...) or a fragment (#...): give the address of the harness root',
      ],
      [
        'https://agent.example.com/?',
        'must not have a query (?...) or a fragment (#...): give the address of the harness root',
      ],
    ]) {
      assert.deepEqual(checkPublicAddress(publicUrlSchema, given!), { problem }, given);
    }
  });

  it('the config keys publicUrl and publicGrpcAddress are checked at start-up, naming the key', () => {
    const config = parseConfig(
      JSON.stringify({ publicUrl: 'https://agent.example.com/', publicGrpcAddress: 'grpc.example.com:443' }),
    );
    assert.equal(config.publicUrl, 'https://agent.example.com');
    assert.equal(config.publicGrpcAddress, 'grpc.example.com:443');
    assert.match(configProblem({ publicUrl: 'https://agent.example.com?x=1' }), /publicUrl: must not have a query/);
    assert.match(
      configProblem({ publicUrl: 'https://bob:pw@agent.example.com' }),
      /publicUrl: must not contain a user name or password/,
    );
    assert.doesNotMatch(configProblem({ publicUrl: 'https://bob:pw@agent.example.com' }), /pw/);
    assert.match(configProblem({ publicUrl: 42 }), /publicUrl: /);
    assert.match(
      configProblem({ publicGrpcAddress: 'https://grpc.example.com' }),
      /publicGrpcAddress: must be "host:port"/,
    );
  });

  it('the public gRPC address is host:port', () => {
    for (const ok of ['grpc.example.com:443', '10.0.0.5:50051', '[2001:db8::1]:443', 'localhost:1']) {
      assert.deepEqual(checkPublicAddress(publicGrpcAddressSchema, ok), { value: ok }, ok);
    }
    for (const bad of [
      'grpc.example.com',
      'grpc.example.com:0',
      'grpc.example.com:65536',
      'grpc://grpc.example.com:443',
      'grpc.example.com:443/x',
      ':443',
    ]) {
      assert.ok('problem' in checkPublicAddress(publicGrpcAddressSchema, bad), bad);
    }
  });
});
