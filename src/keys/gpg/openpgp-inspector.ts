import * as openpgp from 'openpgp';
import { GpgEntity, GpgKeyFacts, GpgKeyParseError, MAX_ARMORED_KEY_LENGTH } from './gpg-key-facts';
import { keyRingPolicyFailure } from './key-policy';

// One cohesive thing, kept whole though long: the reader of an OpenPGP key ring and its signatures.

export type { GpgEntity, GpgKeyFacts } from './gpg-key-facts';
export { GpgKeyParseError, MAX_ARMORED_KEY_LENGTH } from './gpg-key-facts';

/** The submitted key ring: what the service reads, plus the parsed keys the signature check needs. */
export class GpgKeyRing {
  constructor(
    readonly entities: GpgEntity[],
    /** Parsed keys, same order as entities; opaque outside this adapter. */
    readonly keys: readonly openpgp.Key[],
  ) {}
}

/** Old RSA keys (1024 bits) are still read, as Forgejo reads them; everything else is openpgp's default. */
const CONFIG: openpgp.Config = { ...openpgp.config, minRSABits: 1024 };

/** What a `text` column holds on MySQL: the stored armor and each key packet must fit. */
const MAX_STORED_LENGTH = 65_535;

/** Tolerated client clock lead when checking a signature's creation time. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

const KEY_FLAG = { certify: 0x01, sign: 0x02, encryptComms: 0x04, encryptStorage: 0x08 } as const;

/**
 * The only code that uses openpgp. Every failure of the library is turned into a GpgKeyParseError or a
 * negative answer: no input can make it throw anything else. It runs inside the key worker
 * (openpgp.worker.js), never on the server's main thread: OpenPgpAdapter hands it the work.
 */
export class OpenPgpInspector {
  async readKeyRing(armored: string): Promise<GpgKeyRing> {
    if (armored.length > MAX_ARMORED_KEY_LENGTH) throw new GpgKeyParseError('armored key is larger than 1 MiB');
    const keys = await readPublicKeys(armored);
    // The policy comes before any signature is verified (merging verifies too).
    const failure = keyRingPolicyFailure(keys);
    if (failure) throw new GpgKeyParseError(failure);
    const merged = new Map<string, openpgp.Key>();
    for (const key of keys) {
      const fingerprint = key.getFingerprint();
      const existing = merged.get(fingerprint);
      merged.set(fingerprint, existing ? await guard(() => existing.update(key, nullDate(), CONFIG)) : key);
    }
    const unique = [...merged.values()];
    const entities: GpgEntity[] = [];
    for (const key of unique) entities.push(await guard(() => describeEntity(key)));
    return new GpgKeyRing(entities, unique);
  }

  /**
   * The primary key id of the entity one of whose keys made a valid detached `armoredSignature` over one of
   * `texts`; null when the signature is unreadable or matches none of them.
   */
  async signerOf(ring: GpgKeyRing, armoredSignature: string, texts: string[], now: Date): Promise<string | null> {
    if (armoredSignature.length > MAX_ARMORED_KEY_LENGTH) return null;
    let signature: openpgp.Signature;
    try {
      signature = await openpgp.readSignature({ armoredSignature, config: CONFIG });
    } catch {
      return null;
    }
    for (const text of texts) {
      try {
        const message = await openpgp.createMessage({ binary: new Uint8Array(Buffer.from(text, 'utf8')) });
        const result = await openpgp.verify({
          message,
          signature,
          verificationKeys: [...ring.keys] as openpgp.PublicKey[],
          date: new Date(now.getTime() + CLOCK_SKEW_MS),
          config: CONFIG,
        });
        const outcomes = await Promise.allSettled(result.signatures.map((item) => item.verified));
        for (const [index, outcome] of outcomes.entries()) {
          if (outcome.status !== 'fulfilled') continue;
          const keyId = result.signatures[index].keyID;
          const signer = ring.keys.findIndex((key) => key.getKeys(keyId).length > 0);
          if (signer >= 0) return ring.entities[signer].keyId;
        }
      } catch {
        // not this text; try the next
      }
    }
    return null;
  }

  /**
   * One armored public-key block holding the stored entities, each limited to the subkeys still stored.
   * An entity that no longer parses is left out rather than failing the whole listing.
   */
  async exportKeys(entities: { armored: string; subkeyIds: ReadonlySet<string> }[], comment?: string): Promise<string> {
    const packets = new openpgp.PacketList<openpgp.AnyPacket>();
    let v6 = false;
    for (const entity of entities) {
      try {
        const [key] = await openpgp.readKeys({ armoredKeys: entity.armored, config: CONFIG });
        key.subkeys = key.subkeys.filter((subkey) => entity.subkeyIds.has(keyIdHex(subkey)));
        packets.push(...key.toPacketList());
        v6 ||= key.keyPacket.version === 6;
      } catch {
        // skipped: see above
      }
    }
    // RFC 9580: an armored v6 key carries no CRC24 checksum line.
    return openpgp.armor(openpgp.enums.armor.publicKey, packets.write(), undefined, undefined, comment, !v6, CONFIG);
  }
}

async function readPublicKeys(armored: string): Promise<openpgp.Key[]> {
  const blocks = armoredBlocks(armored);
  const keys: openpgp.Key[] = [];
  for (const block of blocks) {
    try {
      keys.push(...(await openpgp.readKeys({ armoredKeys: block, config: CONFIG })));
    } catch (error) {
      throw new GpgKeyParseError(message(error));
    }
  }
  if (keys.length === 0) throw new GpgKeyParseError('no keys found');
  if (keys.some((key) => key.isPrivate())) throw new GpgKeyParseError('expected a public key block, got a private key');
  return keys;
}

const ARMOR_BEGIN = '-----BEGIN PGP ';
const ARMOR_END = '-----END PGP ';
/** Longest armor label looked at; bounding it keeps the scan linear on any input. */
const ARMOR_LABEL_MAX = 64;

/**
 * Splits the text into its armored blocks (openpgp reads only the first block of a text). Text that holds
 * no complete block is returned whole, so that openpgp reports what is wrong with it. Linear in the text:
 * the END lines are indexed first, then each BEGIN is paired with the next END of the same label.
 */
function armoredBlocks(text: string): string[] {
  const ends = new Map<string, number[]>();
  for (let at = text.indexOf(ARMOR_END); at >= 0; at = text.indexOf(ARMOR_END, at + 1)) {
    const label = armorLabelAt(text, at + ARMOR_END.length);
    if (label === undefined) continue;
    const positions = ends.get(label) ?? [];
    positions.push(at);
    ends.set(label, positions);
  }
  const blocks: string[] = [];
  const used = new Map<string, number>();
  let from = 0;
  for (let begin = text.indexOf(ARMOR_BEGIN); begin >= 0; begin = text.indexOf(ARMOR_BEGIN, Math.max(begin + 1, from))) {
    const label = armorLabelAt(text, begin + ARMOR_BEGIN.length);
    if (label === undefined || begin < from) continue;
    const positions = ends.get(label) ?? [];
    let index = used.get(label) ?? 0;
    while (index < positions.length && positions[index] < begin) index++;
    used.set(label, index);
    if (index >= positions.length) continue;
    const end = positions[index] + ARMOR_END.length + label.length + 5;
    blocks.push(text.slice(begin, end));
    from = end;
  }
  return blocks.length > 0 ? blocks : [text];
}

function armorLabelAt(text: string, start: number): string | undefined {
  const window = text.slice(start, start + ARMOR_LABEL_MAX + 5);
  const end = window.indexOf('-----');
  const label = end <= 0 ? undefined : window.slice(0, end);
  return label === undefined || /[\r\n]/.test(label) ? undefined : label;
}

async function describeEntity(key: openpgp.Key): Promise<GpgEntity> {
  const primary = key.keyPacket;
  const selfSignature = await primarySelfSignature(key);
  const subkeys: GpgKeyFacts[] = [];
  const seen = new Set<string>();
  for (const subkey of key.subkeys) {
    const binding = await latestValidSignature(subkey.bindingSignatures, (signature) =>
      signature.verify(primary, openpgp.enums.signature.subkeyBinding, { key: primary, bind: subkey.keyPacket }, nullDate(), undefined, CONFIG),
    );
    const keyId = keyIdHex(subkey);
    // An unbound subkey could be anyone's: it is not stored (it would squat that key id). Nor is a signing
    // subkey without a valid back-signature (RFC 4880 §11.1, 0x19): binding someone else's key packet as a
    // subkey needs no secret of theirs, so only the back-signature proves the subkey's holder agreed.
    if (!binding || seen.has(keyId) || keyId === keyIdHex(key)) continue;
    if (signsBy(subkey.keyPacket, binding) && !(await hasValidBackSignature(primary, subkey, binding))) continue;
    seen.add(keyId);
    subkeys.push(keyFacts(subkey.keyPacket, keyId, binding));
  }
  const armored = storableArmor(key, new Set(subkeys.map((subkey) => subkey.keyId)));
  if (armored.length > MAX_STORED_LENGTH) {
    throw new GpgKeyParseError('key is too large: over 64 KiB without third-party certifications and photo IDs');
  }
  return { ...keyFacts(primary, keyIdHex(key), selfSignature), identityEmails: await identityEmails(key), subkeys, armored };
}

function signsBy(packet: openpgp.AnyKeyPacket, binding: openpgp.SignaturePacket): boolean {
  return capabilities(packet, binding).canSign;
}

async function hasValidBackSignature(primary: openpgp.AnyKeyPacket, subkey: openpgp.Subkey, binding: openpgp.SignaturePacket): Promise<boolean> {
  const embedded = (binding as unknown as { embeddedSignature: openpgp.SignaturePacket | null }).embeddedSignature;
  if (!embedded) return false;
  try {
    await embedded.verify(subkey.keyPacket, openpgp.enums.signature.keyBinding, { key: primary, bind: subkey.keyPacket }, nullDate(), undefined, CONFIG);
    return true;
  } catch {
    return false;
  }
}

/** The packets Anvil keeps of a key, in the order of a transferable public key (RFC 4880 §11.1). */
function storableArmor(key: openpgp.Key, subkeyIds: ReadonlySet<string>): string {
  const packets = new openpgp.PacketList<openpgp.AnyPacket>();
  const signatures = key as unknown as { revocationSignatures: openpgp.SignaturePacket[]; directSignatures: openpgp.SignaturePacket[] };
  packets.push(key.keyPacket, ...signatures.revocationSignatures, ...signatures.directSignatures);
  for (const user of key.users) {
    if (user.userID) packets.push(user.userID, ...user.revocationSignatures, ...user.selfCertifications);
  }
  for (const subkey of key.subkeys) {
    if (subkeyIds.has(keyIdHex(subkey))) packets.push(subkey.keyPacket, ...subkey.revocationSignatures, ...subkey.bindingSignatures);
  }
  // RFC 9580: an armored v6 key carries no CRC24 checksum line.
  return openpgp.armor(openpgp.enums.armor.publicKey, packets.write(), undefined, undefined, undefined, key.keyPacket.version !== 6, CONFIG);
}

/** The self-signature of the primary identity, else the latest valid direct-key signature. */
async function primarySelfSignature(key: openpgp.Key): Promise<openpgp.SignaturePacket | undefined> {
  try {
    return (await key.getPrimaryUser(nullDate(), undefined, CONFIG)).selfCertification;
  } catch {
    // Direct-key signatures exist on every Key at run time; openpgp's typings leave them out.
    const direct = (key as unknown as { directSignatures?: openpgp.SignaturePacket[] }).directSignatures ?? [];
    return latestValidSignature(direct, (signature) =>
      signature.verify(key.keyPacket, openpgp.enums.signature.key, { key: key.keyPacket }, nullDate(), undefined, CONFIG),
    );
  }
}

async function identityEmails(key: openpgp.Key): Promise<string[]> {
  const emails: string[] = [];
  for (const user of key.users) {
    if (!user.userID || user.userID.email.trim() === '') continue;
    try {
      // A valid, unrevoked self-certification at any time (expired keys still name their owner).
      await user.verify(nullDate(), CONFIG);
    } catch {
      continue;
    }
    emails.push(user.userID.email.trim());
  }
  return emails;
}

async function latestValidSignature(
  signatures: openpgp.SignaturePacket[],
  verify: (signature: openpgp.SignaturePacket) => Promise<unknown>,
): Promise<openpgp.SignaturePacket | undefined> {
  const newestFirst = [...signatures].sort((a, b) => (b.created?.getTime() ?? 0) - (a.created?.getTime() ?? 0));
  for (const signature of newestFirst) {
    try {
      await verify(signature);
      return signature;
    } catch {
      // invalid: try an older one
    }
  }
  return undefined;
}

function keyFacts(packet: openpgp.AnyKeyPacket, keyId: string, signature: openpgp.SignaturePacket | undefined): GpgKeyFacts {
  const createdUnix = Math.floor(packet.getCreationTime().getTime() / 1000);
  const lifetime = signature?.keyNeverExpires === false ? (signature.keyExpirationTime ?? 0) : 0;
  const list = new openpgp.PacketList<openpgp.AnyPacket>();
  list.push(packet);
  const publicKey = Buffer.from(list.write()).toString('base64');
  if (publicKey.length > MAX_STORED_LENGTH) throw new GpgKeyParseError('key packet is too large');
  return {
    keyId,
    publicKey,
    createdUnix,
    expiresUnix: lifetime > 0 ? createdUnix + lifetime : 0,
    ...capabilities(packet, signature),
  };
}

/** From the key-flags subpacket when there is one, else from the algorithm. */
function capabilities(packet: openpgp.AnyKeyPacket, signature: openpgp.SignaturePacket | undefined) {
  const flags = signature?.keyFlags;
  if (flags && flags.length > 0) {
    return {
      canCertify: (flags[0] & KEY_FLAG.certify) !== 0,
      canSign: (flags[0] & KEY_FLAG.sign) !== 0,
      canEncryptComms: (flags[0] & KEY_FLAG.encryptComms) !== 0,
      canEncryptStorage: (flags[0] & KEY_FLAG.encryptStorage) !== 0,
    };
  }
  const algorithm: string = packet.getAlgorithmInfo().algorithm;
  const signs = SIGNING_ALGORITHMS.has(algorithm);
  const encrypts = ENCRYPTION_ALGORITHMS.has(algorithm);
  return { canCertify: signs, canSign: signs, canEncryptComms: encrypts, canEncryptStorage: encrypts };
}

const SIGNING_ALGORITHMS = new Set(['rsaEncryptSign', 'rsaSign', 'dsa', 'ecdsa', 'eddsaLegacy', 'ed25519', 'ed448']);
const ENCRYPTION_ALGORITHMS = new Set(['rsaEncryptSign', 'rsaEncrypt', 'elgamal', 'ecdh', 'x25519', 'x448']);

function keyIdHex(key: { getKeyID(): openpgp.KeyID }): string {
  return key.getKeyID().toHex().toUpperCase();
}

/** openpgp skips every time check when given a null date: validity is judged at any time. */
function nullDate(): Date {
  return null as unknown as Date;
}

async function guard<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw new GpgKeyParseError(message(error));
  }
}

function message(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0].trim() || 'invalid key';
}
