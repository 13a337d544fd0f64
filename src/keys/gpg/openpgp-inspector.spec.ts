import * as openpgp from 'openpgp';
import { bindStolenSubkey, dsaSignatureBomb } from '../../../test/support/pgp-attacks';
import { GPG_KEY_POLICY } from './key-policy';
import { GpgKeyParseError, OpenPgpInspector } from './openpgp-inspector';
import { hex, subkeyPackets } from '../../../test/support/openpgp-keys';

/** Keys are generated here with openpgp itself; elliptic-curve keys take milliseconds. */
const CREATED = new Date('2024-01-01T00:00:00Z');
const CREATED_UNIX = CREATED.getTime() / 1000;

interface KeyOptions {
  userIDs?: { name?: string; email?: string }[];
  date?: Date;
  keyExpirationTime?: number;
  subkeys?: { sign?: boolean; keyExpirationTime?: number }[];
}

interface KeyPair {
  privateKey: openpgp.PrivateKey;
  publicKey: openpgp.PublicKey;
}

function eccKey(options: KeyOptions = {}): Promise<KeyPair> {
  return openpgp.generateKey({
    type: 'ecc',
    curve: 'ed25519Legacy',
    userIDs: options.userIDs ?? [{ name: 'Alice', email: 'alice@example.com' }],
    date: options.date ?? CREATED,
    keyExpirationTime: options.keyExpirationTime,
    subkeys: options.subkeys,
    format: 'object',
  });
}

function packetBase64(packet: openpgp.AnyPacket): string {
  const list = new openpgp.PacketList<openpgp.AnyPacket>();
  list.push(packet);
  return Buffer.from(list.write()).toString('base64');
}

async function detachedSignature(text: string, signingKeys: openpgp.PrivateKey, signingKeyIDs?: openpgp.KeyID): Promise<string> {
  const message = await openpgp.createMessage({ binary: new Uint8Array(Buffer.from(text)) });
  return openpgp.sign({ message, signingKeys, signingKeyIDs, detached: true, format: 'armored' }) as Promise<string>;
}

/** A self-signature (user certification or subkey binding) without a key-flags subpacket. */
async function signatureWithoutFlags(
  primary: openpgp.SecretKeyPacket,
  type: openpgp.enums.signature,
  data: Record<string, unknown>,
): Promise<openpgp.SignaturePacket> {
  const signature = new openpgp.SignaturePacket();
  signature.signatureType = type;
  signature.publicKeyAlgorithm = primary.algorithm;
  signature.hashAlgorithm = openpgp.enums.hash.sha256;
  await (signature as unknown as { sign(key: unknown, data: unknown, date: Date, detached: boolean, config: openpgp.Config): Promise<void> }).sign(
    primary,
    data,
    CREATED,
    false,
    openpgp.config,
  );
  return signature;
}

describe('OpenPgpInspector', () => {
  const adapter = new OpenPgpInspector();
  let alice: KeyPair;

  beforeAll(async () => {
    alice = await eccKey({
      userIDs: [
        { name: 'Alice', email: 'alice@example.com' },
        { name: 'Work', email: 'Alice@Work.Example' },
      ],
      keyExpirationTime: 86400,
      subkeys: [{ keyExpirationTime: 0 }, { sign: true, keyExpirationTime: 7200 }],
    });
  });

  it('reads the primary key and its subkeys: ids, packets, times and key-flag capabilities', async () => {
    const ring = await adapter.readKeyRing(alice.publicKey.armor());
    expect(ring.entities).toHaveLength(1);
    const [entity] = ring.entities;
    expect(entity.keyId).toBe(hex(alice.publicKey));
    expect(entity.keyId).toMatch(/^[0-9A-F]{16}$/);
    expect(entity.publicKey).toBe(packetBase64(alice.publicKey.keyPacket));
    expect(entity.createdUnix).toBe(CREATED_UNIX);
    expect(entity.expiresUnix).toBe(CREATED_UNIX + 86400);
    expect(entity).toMatchObject({ canCertify: true, canSign: true, canEncryptComms: false, canEncryptStorage: false });
    expect(entity.identityEmails).toEqual(['alice@example.com', 'Alice@Work.Example']);
    expect(entity.subkeys).toEqual([
      {
        keyId: hex(alice.publicKey.subkeys[0]),
        publicKey: packetBase64(alice.publicKey.subkeys[0].keyPacket),
        createdUnix: CREATED_UNIX,
        expiresUnix: 0,
        canCertify: false,
        canSign: false,
        canEncryptComms: true,
        canEncryptStorage: true,
      },
      expect.objectContaining({ keyId: hex(alice.publicKey.subkeys[1]), expiresUnix: CREATED_UNIX + 7200, canSign: true, canEncryptComms: false }),
    ]);
    expect(entity.armored).toContain('-----BEGIN PGP PUBLIC KEY BLOCK-----');
  });

  it('reads RFC 9580 (v6) keys, whose key id is the start of the fingerprint', async () => {
    const v6 = await openpgp.generateKey({ type: 'curve25519', userIDs: [{ email: 'v6@example.com' }], format: 'object', config: { v6Keys: true } });
    const [entity] = (await adapter.readKeyRing(v6.publicKey.armor())).entities;
    expect(v6.publicKey.keyPacket.version).toBe(6);
    expect(entity.keyId).toBe(v6.publicKey.getFingerprint().slice(0, 16).toUpperCase());
    expect(entity.identityEmails).toEqual(['v6@example.com']);
    expect(entity.subkeys).toHaveLength(1);
    const exported = await adapter.exportKeys([{ armored: entity.armored, subkeyIds: new Set([entity.subkeys[0].keyId]) }]);
    expect((await openpgp.readKeys({ armoredKeys: exported })).map(hex)).toEqual([entity.keyId]);
  });

  it('takes capabilities from the algorithm when a signature has no key flags', async () => {
    const rsa = await openpgp.generateKey({ type: 'rsa', rsaBits: 2048, userIDs: [{ email: 'r@example.com' }], date: CREATED, format: 'object' });
    const key = rsa.privateKey;
    const primary = key.keyPacket as openpgp.SecretKeyPacket;
    const user = key.users[0];
    user.selfCertifications = [await signatureWithoutFlags(primary, openpgp.enums.signature.certPositive, { userID: user.userID, key: primary })];
    const ecc = await eccKey();
    const eccKeyObject = ecc.privateKey;
    const eccPrimary = eccKeyObject.keyPacket as openpgp.SecretKeyPacket;
    const subkey = eccKeyObject.subkeys[0];
    subkey.bindingSignatures = [await signatureWithoutFlags(eccPrimary, openpgp.enums.signature.subkeyBinding, { key: eccPrimary, bind: subkey.keyPacket })];
    eccKeyObject.users[0].selfCertifications = [
      await signatureWithoutFlags(eccPrimary, openpgp.enums.signature.certPositive, { userID: eccKeyObject.users[0].userID, key: eccPrimary }),
    ];

    const [rsaEntity] = (await adapter.readKeyRing(key.toPublic().armor())).entities;
    expect(rsaEntity).toMatchObject({ canCertify: true, canSign: true, canEncryptComms: true, canEncryptStorage: true, expiresUnix: 0 });
    expect(rsaEntity.identityEmails).toEqual(['r@example.com']);
    const [eccEntity] = (await adapter.readKeyRing(eccKeyObject.toPublic().armor())).entities;
    expect(eccEntity).toMatchObject({ canCertify: true, canSign: true, canEncryptComms: false, canEncryptStorage: false });
    expect(eccEntity.subkeys[0]).toMatchObject({ canCertify: false, canSign: false, canEncryptComms: true, canEncryptStorage: true });
  });

  it('leaves out revoked identities and subkeys without a valid binding signature', async () => {
    const key = (await eccKey({ userIDs: [{ email: 'kept@example.com' }, { email: 'revoked@example.com' }], subkeys: [{}, {}] })).privateKey;
    key.users[1] = await key.users[1].revoke(key.keyPacket as openpgp.SecretKeyPacket, {}, undefined, openpgp.config);
    // A subkey carrying a binding signature made for another subkey is not bound to this key.
    key.subkeys[1].bindingSignatures = key.subkeys[0].bindingSignatures;
    const [entity] = (await adapter.readKeyRing(key.toPublic().armor())).entities;
    expect(entity.identityEmails).toEqual(['kept@example.com']);
    expect(entity.subkeys.map((subkey) => subkey.keyId)).toEqual([hex(key.subkeys[0])]);
  });

  it('reads several entities, from one block or several, and merges parts of the same key', async () => {
    const bob = await eccKey({ userIDs: [{ email: 'bob@example.com' }] });
    const both = new openpgp.PacketList<openpgp.AnyPacket>();
    both.push(...alice.publicKey.toPacketList(), ...bob.publicKey.toPacketList());
    const oneBlock = openpgp.armor(openpgp.enums.armor.publicKey, both.write());
    expect((await adapter.readKeyRing(oneBlock)).entities.map((entity) => entity.keyId)).toEqual([hex(alice.publicKey), hex(bob.publicKey)]);
    const twoBlocks = `${bob.publicKey.armor()}\nsome text between\n${alice.publicKey.armor()}`;
    expect((await adapter.readKeyRing(twoBlocks)).entities.map((entity) => entity.keyId)).toEqual([hex(bob.publicKey), hex(alice.publicKey)]);

    // The same primary twice: once with the first identity and subkey, once with the second ones.
    const full = alice.publicKey;
    const part = (userIndex: number, subkeyIndex: number) => {
      const list = new openpgp.PacketList<openpgp.AnyPacket>();
      list.push(full.keyPacket, ...full.users[userIndex].toPacketList(), ...subkeyPackets(full.subkeys[subkeyIndex]));
      return list;
    };
    const parts = new openpgp.PacketList<openpgp.AnyPacket>();
    parts.push(...part(0, 0), ...part(1, 1));
    const merged = await adapter.readKeyRing(openpgp.armor(openpgp.enums.armor.publicKey, parts.write()));
    expect(merged.entities).toHaveLength(1);
    expect(merged.entities[0].identityEmails).toEqual(['alice@example.com', 'Alice@Work.Example']);
    expect(merged.entities[0].subkeys.map((subkey) => subkey.keyId)).toEqual(full.subkeys.map(hex));
  });

  it('keeps self-signatures but not third-party certifications in the stored armor', async () => {
    const bob = await eccKey({ userIDs: [{ email: 'bob@example.com' }] });
    const key = (await eccKey({ userIDs: [{ email: 'carol@example.com' }] })).publicKey;
    key.users[0] = await key.users[0].certify([bob.privateKey], CREATED, openpgp.config);
    expect(key.users[0].otherCertifications).toHaveLength(1);
    const [entity] = (await adapter.readKeyRing(key.armor())).entities;
    const [stored] = await openpgp.readKeys({ armoredKeys: entity.armored });
    expect(stored.users[0].otherCertifications).toEqual([]);
    expect(stored.users[0].selfCertifications).toHaveLength(1);
    expect(stored.subkeys.map(hex)).toEqual(key.subkeys.map(hex));
  });

  it('refuses a key too large to store, even without third-party certifications', async () => {
    const userIDs = Array.from({ length: 16 }, (_, index) => ({ name: `${index} ${'n'.repeat(5000)}`, email: `u${index}@example.com` }));
    const big = await eccKey({ userIDs });
    await expect(adapter.readKeyRing(big.publicKey.armor())).rejects.toThrow('key is too large: over 64 KiB without third-party certifications and photo IDs');
  });

  it.each([
    ['garbage', 'not a key'],
    ['an empty block', '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----\n'],
    ['a corrupted block', '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nxjMEZZ!!!\n=abcd\n-----END PGP PUBLIC KEY BLOCK-----\n'],
    ['more than a MiB', 'x'.repeat(1024 * 1024 + 1)],
  ])('refuses %s with a GpgKeyParseError', async (_name, text) => {
    await expect(adapter.readKeyRing(text)).rejects.toBeInstanceOf(GpgKeyParseError);
  });

  it('refuses private keys, signatures and truncated keys', async () => {
    await expect(adapter.readKeyRing(alice.privateKey.armor())).rejects.toThrow('expected a public key block, got a private key');
    const signer = await eccKey({ date: new Date() });
    await expect(adapter.readKeyRing(await detachedSignature('x', signer.privateKey))).rejects.toBeInstanceOf(GpgKeyParseError);
    const armored = alice.publicKey.armor();
    const lines = armored.split('\n');
    const truncated = [...lines.slice(0, 5), ...lines.slice(-3)].join('\n');
    await expect(adapter.readKeyRing(truncated)).rejects.toBeInstanceOf(GpgKeyParseError);
  });

  describe('signerOf', () => {
    it('finds the entity whose primary or signing subkey signed one of the texts', async () => {
      const bob = await eccKey({ userIDs: [{ email: 'bob@example.com' }], date: new Date() });
      const carol = await eccKey({ userIDs: [{ email: 'carol@example.com' }], date: new Date(), subkeys: [{}, { sign: true }] });
      const ring = await adapter.readKeyRing(`${bob.publicKey.armor()}\n${carol.publicKey.armor()}`);
      const now = new Date();
      const bySubkey = await detachedSignature('token\n', carol.privateKey);
      const signingIds = (await openpgp.readSignature({ armoredSignature: bySubkey })).getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
      expect(signingIds).toEqual([hex(carol.privateKey.subkeys[1])]);
      expect(await adapter.signerOf(ring, bySubkey, ['token', 'token\n'], now)).toBe(hex(carol.publicKey));
      expect(await adapter.signerOf(ring, await detachedSignature('token', bob.privateKey), ['token'], now)).toBe(hex(bob.publicKey));
      expect(await adapter.signerOf(ring, bySubkey, ['token', 'token\r\n'], now)).toBeNull();
      const stranger = await eccKey({ date: new Date() });
      expect(await adapter.signerOf(ring, await detachedSignature('token', stranger.privateKey), ['token'], now)).toBeNull();
      expect(await adapter.signerOf(ring, 'garbage', ['token'], now)).toBeNull();
      expect(await adapter.signerOf(ring, bob.publicKey.armor(), ['token'], now)).toBeNull();
    });
  });

  it('exports stored entities in one armored block, without the subkeys no longer stored', async () => {
    const bob = await eccKey({ userIDs: [{ email: 'bob@example.com' }] });
    const [aliceEntity] = (await adapter.readKeyRing(alice.publicKey.armor())).entities;
    const [bobEntity] = (await adapter.readKeyRing(bob.publicKey.armor())).entities;
    const exported = await adapter.exportKeys([
      { armored: aliceEntity.armored, subkeyIds: new Set([aliceEntity.subkeys[1].keyId]) },
      { armored: bobEntity.armored, subkeyIds: new Set(bobEntity.subkeys.map((subkey) => subkey.keyId)) },
      { armored: 'broken', subkeyIds: new Set() },
    ]);
    const keys = await openpgp.readKeys({ armoredKeys: exported });
    expect(keys.map(hex)).toEqual([aliceEntity.keyId, bobEntity.keyId]);
    expect(keys[0].subkeys.map(hex)).toEqual([aliceEntity.subkeys[1].keyId]);
    expect(keys[1].subkeys).toHaveLength(1);
    const empty = await adapter.exportKeys([], "This user hasn't uploaded any GPG keys.");
    expect(empty).toContain("Comment: This user hasn't uploaded any GPG keys.");
    expect(empty).toContain('-----END PGP PUBLIC KEY BLOCK-----');
  });

  describe('policy and proofs before trust', () => {
    it('refuses a DSA key with oversized parameters before verifying any of its signatures', async () => {
      const bomb = dsaSignatureBomb(8192, 'bomb@example.com', 3);
      await expect(adapter.readKeyRing(bomb)).rejects.toThrow(new GpgKeyParseError('DSA keys over 3072 bits (or a subgroup over 256 bits) are not accepted'));
    });

    it('refuses rings with more signatures to verify than the cap', async () => {
      const many = dsaSignatureBomb(1024, 'many@example.com', GPG_KEY_POLICY.maxSignatures + 1, 160);
      await expect(adapter.readKeyRing(many)).rejects.toThrow(/too many signatures to verify/);
    });

    it("does not store another key's primary packet bound as a signing subkey without its back-signature", async () => {
      const victim = await eccKey({ userIDs: [{ email: 'victim@example.com' }] });
      const attacker = await eccKey({ userIDs: [{ email: 'attacker@example.com' }] });
      const forged = await bindStolenSubkey(attacker, victim.publicKey, openpgp.enums.keyFlags.signData, CREATED);

      const [entity] = (await adapter.readKeyRing(forged.armor())).entities;
      expect(entity.keyId).toBe(hex(attacker.publicKey));
      expect(entity.subkeys.map((item) => item.keyId)).not.toContain(hex(victim.publicKey));
      // A genuine signing subkey carries its back-signature and is kept.
      const honest = await eccKey({ subkeys: [{ sign: true }] });
      const [kept] = (await adapter.readKeyRing(honest.publicKey.armor())).entities;
      expect(kept.subkeys).toEqual([expect.objectContaining({ keyId: hex(honest.publicKey.subkeys[0]), canSign: true })]);
    });
  });
});
