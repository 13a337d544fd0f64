import { createHash, generateKeyPairSync } from 'node:crypto';
import { checkSshPublicKey, parseSshPublicKey, SshKeyError } from './ssh-key-parser';
import { sshStrings } from './ssh-wire';

/** Fixtures from Node's crypto; the e2e tests compare against ssh-keygen for every format. */
function ed25519Blob(): Buffer {
  const der = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
  return sshStrings('ssh-ed25519', der.subarray(der.length - 32));
}

/** An RSA blob with a modulus of exactly `bits` bits (its primes do not matter to a parser). */
function rsaBlob(bits: number): Buffer {
  const modulus = Buffer.alloc(bits / 8, 0xa5);
  modulus[0] = 0xc5;
  return sshStrings('ssh-rsa', Buffer.from([1, 0, 1]), Buffer.concat([Buffer.from([0]), modulus]));
}

const reasonOf = (input: string) => {
  try {
    checkSshPublicKey(input);
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(SshKeyError);
    return (error as Error).message;
  }
};

describe('SSH public key parsing', () => {
  const ed25519 = ed25519Blob();
  const line = `ssh-ed25519 ${ed25519.toString('base64')}`;

  it('normalises to `type base64 comment` and fingerprints the blob as ssh-keygen does', () => {
    const key = parseSshPublicKey(`  ${line}   my  laptop \n`);
    expect(key).toEqual({
      content: `${line} my  laptop`,
      type: 'ssh-ed25519',
      kind: 'ed25519',
      bits: 256,
      fingerprint: `SHA256:${createHash('sha256').update(ed25519).digest('base64').replace(/=+$/, '')}`,
    });
    expect(parseSshPublicKey(line).content).toBe(line);
  });

  it('reads the type from the blob when it is left out', () => {
    expect(parseSshPublicKey(ed25519.toString('base64')).content).toBe(line);
    expect(parseSshPublicKey(`${ed25519.toString('base64')} a comment`).content).toBe(`${line} a comment`);
  });

  it('enforces the minimum sizes: rsa 3071 bits, and no dsa', () => {
    expect(reasonOf(`ssh-rsa ${rsaBlob(2048).toString('base64')}`)).toBe('key length is not enough: got 2048, needs 3071');
    expect(reasonOf(`ssh-rsa ${rsaBlob(3072).toString('base64')}`)).toBe('accepted');
    const dsa = generateKeyPairSync('dsa', { modulusLength: 1024, divisorLength: 160 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
    expect(reasonOf(dsa)).toBe('key type is not allowed: dsa');
  });

  it('refuses RSA exponents Go refuses', () => {
    const n = Buffer.concat([Buffer.from([0]), Buffer.alloc(384, 0xff)]);
    expect(reasonOf(`ssh-rsa ${sshStrings('ssh-rsa', Buffer.from([2]), n).toString('base64')}`)).toBe('invalid ssh public key: incorrect exponent');
    expect(reasonOf(`ssh-rsa ${sshStrings('ssh-rsa', Buffer.from([1, 0, 0, 1]), n).toString('base64')}`)).toBe('invalid ssh public key: exponent too large');
  });

  it('knows no algorithm named after a member of Object.prototype', () => {
    for (const name of ['constructor', 'toString', '__proto__', 'valueOf']) {
      const blob = sshStrings(name, Buffer.alloc(32, 1), Buffer.alloc(32, 2)).toString('base64');
      expect(reasonOf(`${name} ${blob}`)).toBe(`invalid ssh public key: unknown key algorithm: ${name}`);
      expect(reasonOf(blob)).toBe(`invalid ssh public key: unknown key algorithm: ${name}`);
    }
  });

  it('refuses blobs over OpenSSH’s 16384-byte limit and lines too long to store', () => {
    expect(reasonOf(`ssh-rsa ${rsaBlob(16384 * 8).toString('base64')}`)).toBe('invalid ssh public key: key is larger than 16384 bytes');
    expect(reasonOf(`${line} ${'é'.repeat(20_000)}`)).toBe('the key comment is too long');
    expect(reasonOf(`${line} ${'c'.repeat(20_000)}`)).toBe('the key comment is too long');
    expect(reasonOf(`${line} ${'c'.repeat(1024)}`)).toBe('accepted');
  });

  describe('on the main thread: size policy before any parser or number work (SECURITY.md)', () => {
    // The worst keys within the 16 KiB blob cap: the biggest modulus, the biggest exponent, a PEM of the same size.
    const hugeModulus = Buffer.concat([Buffer.from([0]), Buffer.alloc(16_300, 0xc5)]);
    const worst = {
      modulus: `ssh-rsa ${sshStrings('ssh-rsa', Buffer.from([1, 0, 1]), hugeModulus).toString('base64')}`,
      exponent: `ssh-rsa ${sshStrings('ssh-rsa', Buffer.alloc(15_900, 0xff), Buffer.alloc(385, 0xff)).toString('base64')}`,
      paddedExponent: `ssh-rsa ${sshStrings('ssh-rsa', Buffer.concat([Buffer.alloc(15_900), Buffer.from([1, 0, 1])]), Buffer.concat([Buffer.from([0]), Buffer.alloc(384, 0xc5)])).toString('base64')}`,
      pem: `-----BEGIN PUBLIC KEY-----\n${Buffer.alloc(20_000, 0x30).toString('base64')}\n-----END PUBLIC KEY-----`,
    };
    const parsers = () => {
      const sshpk = jest.requireActual<typeof import('sshpk')>('sshpk');
      const crypto = jest.requireActual<typeof import('node:crypto')>('node:crypto');
      return [jest.spyOn(sshpk, 'parseKey'), jest.spyOn(crypto, 'createPublicKey'), jest.spyOn(globalThis, 'BigInt')];
    };
    afterEach(() => jest.restoreAllMocks());

    it('refuses an oversized RSA modulus, exponent or PEM before sshpk, OpenSSL or BigInt see it', () => {
      const spies = parsers();
      expect(reasonOf(worst.modulus)).toBe('key is too large: got 130400 bits, at most 16384');
      expect(reasonOf(worst.exponent)).toBe('invalid ssh public key: exponent too large');
      expect(reasonOf(worst.pem)).toBe('invalid ssh public key: key is larger than 16384 bytes');
      for (const spy of spies) expect(spy).not.toHaveBeenCalled();
    });

    it('reads a small exponent behind any number of zero bytes from its significant bytes only', () => {
      const spies = parsers();
      // Within every cap: accepted as a 3072-bit key with exponent 65537, without BigInt.
      expect(reasonOf(worst.paddedExponent)).toBe('accepted');
      expect(spies[0]).toHaveBeenCalled();
      expect(spies[2]).not.toHaveBeenCalled();
    });
  });

  it('reports only the first line of a library error, without its preamble', () => {
    const reason = reasonOf('-----BEGIN PUBLIC KEY-----\nMAMCAQU=\n-----END PUBLIC KEY-----');
    expect(reason).toMatch(/^failed to parse DER encoded public key as either PKIX or PEM RSA Key: /);
    expect(reason).not.toContain('\n');
    expect(reason).not.toContain('Failed to parse');
  });

  it.each(['', ' ', '\u0000', 'AAAA', 'ssh-ed25519 ====', `ssh-ed25519 ${'A'.repeat(5)}`, '---- BEGIN SSH2 PUBLIC KEY ----', '-----BEGIN X-----'])(
    'throws only SshKeyError for %j',
    (input) => {
      expect(() => parseSshPublicKey(input)).toThrow(SshKeyError);
    },
  );
});
