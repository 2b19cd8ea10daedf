import {
  type DeliveryPhase,
  TIMED_OUT,
  describeDeliveryError,
  describeStatus,
} from 'src/webhooks/delivery/delivery-error';

function nodeError(code: string | undefined, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), code === undefined ? {} : { code }, extra);
}

describe('describeDeliveryError', () => {
  it.each<[string, unknown, DeliveryPhase, string]>([
    ['our time-out while connecting', TIMED_OUT, 'connect', 'timeout: connect'],
    ['our time-out in the handshake', TIMED_OUT, 'tls', 'timeout: tls'],
    ['our time-out waiting for the status line', TIMED_OUT, 'response', 'timeout: response'],
    [
      'an OS connect time-out',
      nodeError('ETIMEDOUT', 'connect ETIMEDOUT 203.0.113.9:443'),
      'connect',
      'timeout: connect',
    ],
    [
      'an unknown host',
      nodeError('ENOTFOUND', 'getaddrinfo ENOTFOUND hooks.example.invalid', { syscall: 'getaddrinfo' }),
      'connect',
      'dns: ENOTFOUND',
    ],
    [
      'a DNS server that does not answer',
      nodeError('EAI_AGAIN', 'getaddrinfo EAI_AGAIN hooks.example.com', { syscall: 'getaddrinfo' }),
      'connect',
      'dns: EAI_AGAIN',
    ],
    ['a closed port', nodeError('ECONNREFUSED', 'connect ECONNREFUSED 127.0.0.1:9'), 'connect', 'connection refused'],
    ['a reset before the answer', nodeError('ECONNRESET', 'read ECONNRESET'), 'response', 'connection reset'],
    ['a close before the answer', nodeError('ECONNRESET', 'socket hang up'), 'response', 'connection reset'],
    [
      'a close in the handshake',
      nodeError('ECONNRESET', 'Client network socket disconnected before secure TLS connection was established'),
      'tls',
      'connection reset',
    ],
    ['a write to a closed socket', nodeError('EPIPE', 'write EPIPE'), 'response', 'connection reset'],
    [
      'an expired certificate',
      nodeError('CERT_HAS_EXPIRED', 'certificate has expired'),
      'tls',
      'tls: CERT_HAS_EXPIRED certificate has expired',
    ],
    [
      'a self-signed certificate',
      nodeError('DEPTH_ZERO_SELF_SIGNED_CERT', 'self-signed certificate'),
      'tls',
      'tls: DEPTH_ZERO_SELF_SIGNED_CERT self-signed certificate',
    ],
    [
      'a self-signed certificate, with the advice Node 24 and 26 append for their own operator',
      nodeError(
        'DEPTH_ZERO_SELF_SIGNED_CERT',
        'self-signed certificate; if the root CA is installed locally, try running Node.js with --use-system-ca',
      ),
      'tls',
      'tls: DEPTH_ZERO_SELF_SIGNED_CERT self-signed certificate',
    ],
    [
      'a certificate from an unknown CA',
      nodeError('UNABLE_TO_VERIFY_LEAF_SIGNATURE', 'unable to verify the first certificate'),
      'tls',
      'tls: UNABLE_TO_VERIFY_LEAF_SIGNATURE unable to verify the first certificate',
    ],
    [
      'a certificate for another name',
      nodeError(
        'ERR_TLS_CERT_ALTNAME_INVALID',
        "Hostname/IP does not match certificate's altnames: Host: hooks.example.com. is not in the cert's altnames: DNS:other.example",
      ),
      'tls',
      "tls: ERR_TLS_CERT_ALTNAME_INVALID Hostname/IP does not match certificate's altnames: Host: hooks.example.com. is not in the cert's altnames: DNS:other.example",
    ],
    [
      'plain HTTP on the TLS port (an EPROTO from a write)',
      nodeError(
        'EPROTO',
        'write EPROTO 801CC6BD547F0000:error:0A00010B:SSL routines:ssl3_get_record:wrong version number:../deps/openssl/openssl/ssl/record/ssl3_record.c:350:\n',
        { syscall: 'write' },
      ),
      'tls',
      'tls: ERR_SSL_WRONG_VERSION_NUMBER wrong version number',
    ],
    [
      'a TLS 1.1-only server',
      nodeError(
        'EPROTO',
        'write EPROTO 801CC6BD547F0000:error:0A00042E:SSL routines:ssl3_read_bytes:tlsv1 alert protocol version:../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 70\n',
        { syscall: 'write' },
      ),
      'tls',
      'tls: ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION tlsv1 alert protocol version',
    ],
    [
      'an OpenSSL error Node already named',
      nodeError(
        'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE',
        'C0E7:error:0A000410:SSL routines:ssl3_read_bytes:sslv3 alert handshake failure:../ssl/record/rec_layer_s3.c:1605:',
      ),
      'tls',
      'tls: ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE sslv3 alert handshake failure',
    ],
    ['any other error in the handshake', nodeError('EPROTO', 'unexpected'), 'tls', 'tls: EPROTO unexpected'],
    ['a blocked address', nodeError('EBLOCKED', 'blocked: private address'), 'connect', 'blocked: private address'],
    ['an error we have no words for', nodeError('EHOSTUNREACH', 'connect EHOSTUNREACH'), 'connect', 'EHOSTUNREACH'],
    ['an error without a code', nodeError(undefined, 'something odd'), 'response', 'something odd'],
    ['not an error at all', undefined, 'response', 'network error'],
  ])('%s', (_what, error, phase, text) => {
    expect(describeDeliveryError(error, phase)).toBe(text);
  });

  it('never writes more than the column holds', () => {
    const long = nodeError('ERR_TLS_CERT_ALTNAME_INVALID', 'x'.repeat(2_000));
    expect(describeDeliveryError(long, 'tls').length).toBe(500);
    expect(describeDeliveryError(nodeError(undefined, 'y'.repeat(2_000)), 'response').length).toBe(500);
  });
});

describe('describeStatus', () => {
  it.each<[number, string | null]>([
    [200, null],
    [204, null],
    [299, null],
    [301, 'redirect not followed (HTTP 301)'],
    [302, 'redirect not followed (HTTP 302)'],
    [308, 'redirect not followed (HTTP 308)'],
    [400, 'HTTP 400'],
    [410, 'HTTP 410 (endpoint gone)'],
    [500, 'HTTP 500'],
    [100, 'HTTP 100'],
  ])('%d → %s', (status, text) => {
    expect(describeStatus(status)).toBe(text);
  });
});
