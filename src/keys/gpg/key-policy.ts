import type * as openpgp from 'openpgp';

/**
 * What an uploaded key ring may hold, checked on the parsed packets before any signature is verified:
 * verification is the expensive step (DSA and ElGamal run on JavaScript BigInt), so a ring that would be
 * costly to check is refused while refusing is still cheap. Documented in SECURITY.md.
 */
export const GPG_KEY_POLICY = {
  /** Entities (primary keys) in one upload. */
  maxEntities: 8,
  maxUserIds: 64,
  maxSubkeys: 32,
  /** Self-signatures, direct-key signatures, bindings and revocations that verification may have to check. */
  maxSignatures: 200,
  /** OpenSSH refuses RSA over 16 384 bits; so does Anvil, and exponents over 64 bits. */
  maxRsaBits: 16_384,
  maxRsaExponentBits: 64,
  /** FIPS 186-4's largest DSA parameters (L = 3072, N = 256): each verification stays in milliseconds. */
  maxDsaPBits: 3072,
  maxDsaQBits: 256,
  maxElGamalBits: 4096,
} as const;

/** Why a key ring breaks the policy, or undefined when it does not. */
export function keyRingPolicyFailure(keys: readonly openpgp.Key[]): string | undefined {
  if (keys.length > GPG_KEY_POLICY.maxEntities) return `too many keys: more than ${GPG_KEY_POLICY.maxEntities} in one upload`;
  let signatures = 0;
  for (const key of keys) {
    if (key.users.length > GPG_KEY_POLICY.maxUserIds) return `too many user ids: more than ${GPG_KEY_POLICY.maxUserIds}`;
    if (key.subkeys.length > GPG_KEY_POLICY.maxSubkeys) return `too many subkeys: more than ${GPG_KEY_POLICY.maxSubkeys}`;
    const failure = keyPacketFailure(key.keyPacket) ?? key.subkeys.map((subkey) => keyPacketFailure(subkey.keyPacket)).find(Boolean);
    if (failure) return failure;
    signatures += verifiableSignatures(key);
    if (signatures > GPG_KEY_POLICY.maxSignatures) return `too many signatures to verify: more than ${GPG_KEY_POLICY.maxSignatures}`;
  }
  return undefined;
}

function verifiableSignatures(key: openpgp.Key): number {
  const own = key as unknown as { directSignatures: unknown[]; revocationSignatures: unknown[] };
  let count = own.directSignatures.length + own.revocationSignatures.length;
  for (const user of key.users) count += user.selfCertifications.length + user.revocationSignatures.length;
  for (const subkey of key.subkeys) {
    count += subkey.revocationSignatures.length;
    // A binding signature may carry an embedded back-signature: two verifications.
    count += subkey.bindingSignatures.length * 2;
  }
  return count;
}

type PublicParams = Partial<Record<'n' | 'e' | 'p' | 'q', Uint8Array>>;

export function keyPacketFailure(packet: openpgp.AnyKeyPacket): string | undefined {
  const algorithm: string = packet.getAlgorithmInfo().algorithm;
  const params = (packet as unknown as { publicParams: PublicParams }).publicParams;
  switch (algorithm) {
    case 'rsaEncryptSign':
    case 'rsaEncrypt':
    case 'rsaSign':
      if (bitLength(params.n) > GPG_KEY_POLICY.maxRsaBits) return `RSA keys over ${GPG_KEY_POLICY.maxRsaBits} bits are not accepted`;
      if (bitLength(params.e) > GPG_KEY_POLICY.maxRsaExponentBits) return 'RSA public exponents over 64 bits are not accepted';
      return undefined;
    case 'dsa':
      if (bitLength(params.p) > GPG_KEY_POLICY.maxDsaPBits || bitLength(params.q) > GPG_KEY_POLICY.maxDsaQBits) {
        return `DSA keys over ${GPG_KEY_POLICY.maxDsaPBits} bits (or a subgroup over ${GPG_KEY_POLICY.maxDsaQBits} bits) are not accepted`;
      }
      return undefined;
    case 'elgamal':
      if (bitLength(params.p) > GPG_KEY_POLICY.maxElGamalBits) return `ElGamal keys over ${GPG_KEY_POLICY.maxElGamalBits} bits are not accepted`;
      return undefined;
    case 'ecdsa':
    case 'ecdh':
    case 'eddsaLegacy':
    case 'ed25519':
    case 'ed448':
    case 'x25519':
    case 'x448':
      return undefined;
    default:
      return `keys of algorithm ${algorithm} are not accepted`;
  }
}

function bitLength(value: Uint8Array | undefined): number {
  if (!value || value.length === 0) return 0;
  let start = 0;
  while (start < value.length && value[start] === 0) start++;
  if (start === value.length) return 0;
  return (value.length - start - 1) * 8 + (32 - Math.clz32(value[start]));
}
