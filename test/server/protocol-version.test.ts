/**
 * The versions spoken (issue 36): A2A 1.0 and 1.1 are served, and the card lists each binding
 * once per version, 1.0 first, at the same address.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { VersionNotSupportedError } from '@a2a-js/sdk/errors';
import { baseAgentCard } from '../../src/server/card.js';
import {
  SPOKEN_VERSIONS,
  checkProtocolVersion,
  isSpokenVersion,
  versionRefusal,
} from '../../src/server/protocol-version.js';

describe('the A2A versions spoken (issue 36)', () => {
  it('are 1.0 and 1.1; 0.3, 1.2 and none are not', () => {
    assert.deepEqual(SPOKEN_VERSIONS, ['1.0', '1.1']);
    for (const version of ['1.0', '1.1']) assert.equal(isSpokenVersion(version), true);
    for (const version of ['0.3', '1.2', '', undefined]) assert.equal(isSpokenVersion(version), false);
  });

  it('a call asking for either passes the check; another, or none, is refused, naming both', () => {
    checkProtocolVersion('1.1');
    checkProtocolVersion('1.0');
    assert.throws(() => checkProtocolVersion('0.9'), VersionNotSupportedError);
    assert.throws(() => checkProtocolVersion(undefined), VersionNotSupportedError);
    assert.equal(
      versionRefusal('0.9'),
      "The requested A2A protocol version '0.9' is not supported: this server speaks A2A 1.0 and 1.1; send the header `A2A-Version: 1.0` or `A2A-Version: 1.1`.",
    );
    assert.match(versionRefusal(undefined), /^A request without the A2A-Version header asks for A2A 0\.3/);
  });

  it('the card lists each binding for 1.0, then for 1.1, at the same addresses', () => {
    const card = baseAgentCard({ httpUrl: 'http://127.0.0.1:1', grpcAddress: '127.0.0.1:2', version: 'test' });
    assert.deepEqual(
      card.supportedInterfaces.map((i) => [i.protocolBinding, i.protocolVersion, i.url]),
      [
        ['JSONRPC', '1.0', 'http://127.0.0.1:1/a2a/jsonrpc'],
        ['HTTP+JSON', '1.0', 'http://127.0.0.1:1/a2a/rest'],
        ['GRPC', '1.0', '127.0.0.1:2'],
        ['JSONRPC', '1.1', 'http://127.0.0.1:1/a2a/jsonrpc'],
        ['HTTP+JSON', '1.1', 'http://127.0.0.1:1/a2a/rest'],
        ['GRPC', '1.1', '127.0.0.1:2'],
      ],
    );
    const withoutGrpc = baseAgentCard({ httpUrl: 'http://127.0.0.1:1', version: 'test' });
    assert.deepEqual(
      withoutGrpc.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`),
      ['JSONRPC 1.0', 'HTTP+JSON 1.0', 'JSONRPC 1.1', 'HTTP+JSON 1.1'],
    );
  });
});
