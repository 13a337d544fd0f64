import { createHash, createPublicKey } from 'node:crypto';
import type * as Sshpk from 'sshpk';
import { SshWireReader, sshStrings } from './ssh-wire';

// One cohesive thing, kept whole though long: the parser of SSH public keys and their policy.

let sshpkModule: typeof Sshpk | undefined;
/** sshpk and what it loads (some 30 modules) are loaded when a key is first parsed, not at every start. */
function sshpk(): typeof Sshpk {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (sshpkModule ??= require('sshpk') as typeof Sshpk);
}

/**
 * Parsing and policy of SSH public keys, as Forgejo's CheckPublicKeyString does it.
 *
 * sshpk parses the key material (RSA, DSA, ECDSA, Ed25519, certificates, PEM) and Node's crypto validates
 * it (an ECDSA point must lie on its curve). sshpk knows neither the FIDO security-key types (`sk-…`) nor
 * strict framing (it accepts trailing bytes and short Ed25519 keys), so the blob is first split into its
 * fields here, exactly as OpenSSH lays them out.
 *
 * Cost (SECURITY.md, "SSH keys on the main thread"): this runs on the event loop, so every step is linear in
 * the input and no step does big-number arithmetic on attacker-chosen sizes. The input is capped (body limit,
 * then MAX_BLOB_BYTES on the blob or the PEM's DER) before any parsing; the RSA modulus size and exponent size
 * are checked from the byte lengths of their fields before sshpk or OpenSSH's decoder sees them; ECDSA points
 * are checked on fixed curves (at most 521 bits); nothing is ever verified (no signature comes with an SSH key).
 * sshpk and OpenSSL only copy the fields into their structures.
 */
export type SshKeyKind = 'rsa' | 'dsa' | 'ecdsa' | 'ed25519' | 'ecdsa-sk' | 'ed25519-sk';

export interface SshPublicKey {
  /** Normalised single line: `<type> <base64>[ <comment>]`. */
  content: string;
  /** The algorithm name on the wire, e.g. `ssh-ed25519` or `ssh-rsa-cert-v01@openssh.com`. */
  type: string;
  kind: SshKeyKind;
  /** Key size in bits; a certificate is measured by the key inside it. */
  bits: number;
  /** What `ssh-keygen -lf` prints: `SHA256:` and the unpadded base64 of the SHA-256 of the (plain) key blob. */
  fingerprint: string;
}

/** A parse or policy failure; its message is the reason shown after `Invalid key content: `. */
export class SshKeyError extends Error {}

/** Forgejo's defaults; any other kind (dsa) is not allowed at all. */
export const MINIMUM_KEY_SIZES: Readonly<Partial<Record<SshKeyKind, number>>> = {
  ed25519: 256,
  'ed25519-sk': 256,
  ecdsa: 256,
  'ecdsa-sk': 256,
  rsa: 3071,
};

/** Parses the key and applies the minimum-size policy (always enforced). */
export function checkSshPublicKey(input: string): SshPublicKey {
  const key = parseSshPublicKey(input);
  const minimum = MINIMUM_KEY_SIZES[key.kind];
  if (minimum === undefined) throw new SshKeyError(`key type is not allowed: ${key.kind}`);
  if (key.bits < minimum) throw new SshKeyError(`key length is not enough: got ${key.bits}, needs ${minimum}`);
  if (key.kind === 'rsa' && key.bits > MAX_RSA_BITS) throw new SshKeyError(`key is too large: got ${key.bits} bits, at most ${MAX_RSA_BITS}`);
  return key;
}

/** Parses one public key in OpenSSH, RFC 4716 or PEM form; every failure is an SshKeyError. */
export function parseSshPublicKey(input: string): SshPublicKey {
  try {
    return parse(input);
  } catch (error) {
    if (error instanceof SshKeyError) throw error;
    throw new SshKeyError(`invalid ssh public key: ${reason(error)}`);
  }
}

const SSH2_BEGIN = '---- BEGIN SSH2 PUBLIC KEY ----';
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;
const ALGORITHM_NAME = /^[\x21-\x7e]{1,64}$/;
/** OpenSSH's own limit on a public-key blob (SSH_MAX_PUBKEY_BYTES). */
const MAX_BLOB_BYTES = 16384;
/** The stored line, comment included, must fit a `text` column on MySQL (65,535 bytes) with room to spare. */
const MAX_CONTENT_BYTES = 32768;
/** Comments are served to anyone by GET /{user}.keys: kept short (SECURITY.md). */
export const MAX_COMMENT_BYTES = 1024;
/** OpenSSH refuses RSA keys over 16 384 bits (OPENSSH_RSA_MAX_MODULUS_SIZE). */
export const MAX_RSA_BITS = 16384;
/** A following line that starts another key: the paste holds more than one key. */
const ANOTHER_KEY = /^(?:ssh-|ecdsa-sha2-|sk-)\S*[ \t]+AAAA/;
const SINGLE_LINE = 'only a single line with a single key please';

function parse(input: string): SshPublicKey {
  const content = input.trim();
  let given: string | undefined;
  let base64: string;
  let comment = '';
  if (content.startsWith(SSH2_BEGIN)) {
    base64 = rfc4716Body(content);
  } else if (content.includes('-----BEGIN')) {
    base64 = pemToBlob(content).toString('base64');
  } else {
    ({ given, base64, comment } = openSshLine(content));
  }
  const blob = decodeBase64(base64);
  const type = blobType(blob);
  if (given !== undefined && given !== type) throw new SshKeyError(`key type and content does not match: ${given} - ${type}`);
  if (blob.length > MAX_BLOB_BYTES) throw new SshKeyError(`invalid ssh public key: key is larger than ${MAX_BLOB_BYTES} bytes`);
  const measured = measureBlob(blob, type);
  const line = `${type} ${base64} ${comment}`.trim();
  if (Buffer.byteLength(comment, 'utf8') > MAX_COMMENT_BYTES || Buffer.byteLength(line, 'utf8') > MAX_CONTENT_BYTES) {
    throw new SshKeyError('the key comment is too long');
  }
  return {
    content: line,
    type,
    kind: measured.kind,
    bits: measured.bits,
    fingerprint: sshFingerprint(measured.plainBlob),
  };
}

/** `[type] base64 [comment]`; newlines inside are removed first, the comment may contain spaces. */
function openSshLine(content: string): { given?: string; base64: string; comment: string } {
  const lines = content.split(/\r\n|\n/);
  if (lines.slice(1).some((line) => ANOTHER_KEY.test(line.trim()))) throw new SshKeyError(SINGLE_LINE);
  const line = lines.join('');
  if (line.includes('\r')) throw new SshKeyError(SINGLE_LINE);
  const parts = /^(\S+)(?:[ \t]+(\S+))?(?:[ \t]+([\s\S]*))?$/.exec(line);
  if (!parts) throw new SshKeyError('invalid ssh public key: invalid key format');
  const [, first, second, rest] = parts;
  if (second === undefined) return { base64: first, comment: '' };
  // The type may be left out: a blob always starts with the encoded length of its type name ("AAAA").
  if (first.startsWith('AAAA')) return { base64: first, comment: [second, rest ?? ''].join(' ').trim() };
  return { given: first, base64: second, comment: (rest ?? '').trim() };
}

/** RFC 4716: header lines (they hold ':') with their continuations and the BEGIN/END lines are skipped. */
function rfc4716Body(content: string): string {
  let continuation = false;
  let body = '';
  for (const line of content.split(/\r\n|\r|\n/)) {
    if (continuation || /[:-]/.test(line)) {
      continuation = line.endsWith('\\');
      continue;
    }
    body += line.trim();
  }
  return body;
}

/** PEM `PUBLIC KEY` (PKIX) or PKCS#1 `RSA PUBLIC KEY`, converted to the SSH blob. */
function pemToBlob(content: string): Buffer {
  if (pemLabels(content).some((label) => label.includes('PRIVATE'))) throw new SshKeyError('the provided key is a private key');
  const block = firstPemBlock(content);
  const body = block?.body
    .split(/\r\n|\r|\n/)
    .filter((line) => !line.includes(':'))
    .join('')
    .replace(/\s+/g, '');
  if (!body || !BASE64.test(body) || body.length % 4 !== 0) {
    throw new SshKeyError('failed to parse PEM block containing the public key');
  }
  const der = Buffer.from(body, 'base64');
  // The blob cap, before sshpk parses anything: a PKIX or PKCS#1 encoding is no smaller than the SSH blob.
  if (der.length > MAX_BLOB_BYTES) throw new SshKeyError(`invalid ssh public key: key is larger than ${MAX_BLOB_BYTES} bytes`);
  let key: Sshpk.Key;
  try {
    key = sshpk().parseKey(pemText('PUBLIC KEY', der), 'pem');
  } catch (pkixError) {
    try {
      key = sshpk().parseKey(pemText('RSA PUBLIC KEY', der), 'pem');
    } catch {
      throw new SshKeyError(`failed to parse DER encoded public key as either PKIX or PEM RSA Key: ${reason(pkixError)}`);
    }
  }
  if (!['rsa', 'dsa', 'ecdsa', 'ed25519'].includes(key.type)) {
    throw new SshKeyError(`unable to convert to ssh public key: unsupported key type ${key.type}`);
  }
  return key.toBuffer('rfc4253');
}

const PEM_BEGIN = '-----BEGIN ';
const PEM_DASHES = '-----';
/** Longest PEM label looked at; bounding it keeps the scan linear on any input. */
const PEM_LABEL_MAX = 100;

/** The labels of the `-----BEGIN <label>-----` lines, in order. */
function pemLabels(content: string): string[] {
  const labels: string[] = [];
  for (let begin = content.indexOf(PEM_BEGIN); begin >= 0; begin = content.indexOf(PEM_BEGIN, begin + 1)) {
    const label = pemLabelAt(content, begin + PEM_BEGIN.length);
    if (label !== undefined) labels.push(label);
  }
  return labels;
}

function pemLabelAt(content: string, start: number): string | undefined {
  const window = content.slice(start, start + PEM_LABEL_MAX + PEM_DASHES.length);
  const end = window.indexOf(PEM_DASHES);
  const label = end < 0 ? undefined : window.slice(0, end);
  return label === undefined || /[\r\n]/.test(label) ? undefined : label;
}

/** The first complete `-----BEGIN X----- … -----END X-----` block, as Go's pem.Decode finds it. */
function firstPemBlock(content: string): { label: string; body: string } | undefined {
  for (let begin = content.indexOf(PEM_BEGIN); begin >= 0; begin = content.indexOf(PEM_BEGIN, begin + 1)) {
    const label = pemLabelAt(content, begin + PEM_BEGIN.length);
    if (label === undefined) continue;
    const bodyStart = begin + PEM_BEGIN.length + label.length + PEM_DASHES.length;
    const end = content.indexOf(`-----END ${label}-----`, bodyStart);
    return end < 0 ? undefined : { label, body: content.slice(bodyStart, end) };
  }
  return undefined;
}

function pemText(label: string, der: Buffer): string {
  return `-----BEGIN ${label}-----\n${der.toString('base64').replace(/.{64}/g, '$&\n')}\n-----END ${label}-----\n`;
}

function decodeBase64(text: string): Buffer {
  if (text.length % 4 !== 0 || !BASE64.test(text)) throw new SshKeyError('invalid ssh public key: illegal base64 data');
  return Buffer.from(text, 'base64');
}

function blobType(blob: Buffer): string {
  let name: string;
  try {
    name = new SshWireReader(blob).string().toString('latin1');
  } catch {
    throw new SshKeyError('invalid ssh public key: invalid key format');
  }
  if (!ALGORITHM_NAME.test(name)) throw new SshKeyError('invalid ssh public key: invalid key format');
  return name;
}

interface Layout {
  kind: SshKeyKind;
  /** Number of wire strings after the algorithm name. */
  fields: number;
}

const LAYOUTS: Readonly<Record<string, Layout>> = {
  'ssh-rsa': { kind: 'rsa', fields: 2 },
  'ssh-dss': { kind: 'dsa', fields: 4 },
  'ecdsa-sha2-nistp256': { kind: 'ecdsa', fields: 2 },
  'ecdsa-sha2-nistp384': { kind: 'ecdsa', fields: 2 },
  'ecdsa-sha2-nistp521': { kind: 'ecdsa', fields: 2 },
  'ssh-ed25519': { kind: 'ed25519', fields: 1 },
  'sk-ecdsa-sha2-nistp256@openssh.com': { kind: 'ecdsa-sk', fields: 3 },
  'sk-ssh-ed25519@openssh.com': { kind: 'ed25519-sk', fields: 2 },
};

const CURVE_BITS: Readonly<Record<string, number>> = { nistp256: 256, nistp384: 384, nistp521: 521 };
const CURVE_BYTES: Readonly<Record<string, number>> = { nistp256: 32, nistp384: 48, nistp521: 66 };

const CERT_SUFFIX = '-cert-v01@openssh.com';

/** The plain algorithm a certificate type certifies, or undefined for a plain key. */
function certifiedAlgorithm(name: string): string | undefined {
  if (!name.endsWith(CERT_SUFFIX)) return undefined;
  const stem = name.slice(0, -CERT_SUFFIX.length);
  // The security-key types keep their @openssh.com after the suffix: sk-ssh-ed25519-cert-v01@openssh.com.
  return stem.startsWith('sk-') ? `${stem}@openssh.com` : stem;
}

interface Measured {
  kind: SshKeyKind;
  bits: number;
  /** The plain key blob (for a certificate, the key inside it) the fingerprint is taken over. */
  plainBlob: Buffer;
}

function measureBlob(blob: Buffer, name: string): Measured {
  const reader = new SshWireReader(blob);
  reader.string();
  const certified = certifiedAlgorithm(name);
  const algorithm = certified ?? name;
  const layout = Object.hasOwn(LAYOUTS, algorithm) ? LAYOUTS[algorithm] : undefined;
  if (!layout) throw new SshKeyError(`invalid ssh public key: unknown key algorithm: ${name}`);
  if (certified) reader.string(); // nonce
  const fields = Array.from({ length: layout.fields }, () => reader.string());
  if (certified) skipCertificateTail(reader);
  reader.end();
  return measureKey(algorithm, layout.kind, fields);
}

/** serial, type, key id, principals, validity, critical options, extensions, reserved, CA key, signature. */
function skipCertificateTail(reader: SshWireReader): void {
  reader.uint64();
  reader.uint32();
  reader.string();
  reader.string();
  reader.uint64();
  reader.uint64();
  for (let i = 0; i < 5; i++) reader.string();
}

function measureKey(algorithm: string, kind: SshKeyKind, fields: Buffer[]): Measured {
  const plainBlob = sshStrings(algorithm, ...fields);
  switch (kind) {
    case 'ed25519':
    case 'ed25519-sk':
      if (fields[0].length !== 32) throw new SshKeyError('invalid ssh public key: invalid size for Ed25519 key');
      return { kind, bits: 256, plainBlob };
    case 'ecdsa':
    case 'ecdsa-sk': {
      const curve = kind === 'ecdsa' ? algorithm.slice('ecdsa-sha2-'.length) : 'nistp256';
      if (fields[0].toString('latin1') !== curve) throw new SshKeyError('invalid ssh public key: curve name mismatch');
      checkCurvePoint(curve, fields[1]);
      return { kind, bits: CURVE_BITS[curve], plainBlob };
    }
    case 'rsa': {
      // Size policy first, from the fields' byte lengths: sshpk and OpenSSL never see an oversized modulus.
      checkRsaExponent(fields[0]);
      const modulusBits = unsignedBits(fields[1]);
      if (modulusBits > MAX_RSA_BITS) throw new SshKeyError(`key is too large: got ${modulusBits} bits, at most ${MAX_RSA_BITS}`);
      const key = sshpk().parseKey(plainBlob, 'rfc4253');
      createPublicKey(key.toString('pkcs8'));
      // ssh-keygen re-encodes the key before hashing; so does sshpk (canonical mpints).
      return { kind, bits: key.size, plainBlob: key.toBuffer('rfc4253') };
    }
    case 'dsa': {
      const key = sshpk().parseKey(plainBlob, 'rfc4253');
      return { kind, bits: key.size, plainBlob: key.toBuffer('rfc4253') };
    }
  }
}

/** An uncompressed point that lies on the curve (OpenSSH refuses anything else). */
function checkCurvePoint(curve: string, point: Buffer): void {
  if (point.length !== 1 + 2 * CURVE_BYTES[curve] || point[0] !== 0x04) {
    throw new SshKeyError('invalid ssh public key: invalid curve point');
  }
  try {
    const key = sshpk().parseKey(sshStrings(`ecdsa-sha2-${curve}`, curve, point), 'rfc4253');
    createPublicKey(key.toString('pkcs8'));
  } catch {
    throw new SshKeyError('invalid ssh public key: invalid curve point');
  }
}

/** Bits of an unsigned big-endian number (an SSH mpint's magnitude), from its bytes alone. */
function unsignedBits(bytes: Buffer): number {
  let start = 0;
  while (start < bytes.length && bytes[start] === 0) start++;
  if (start === bytes.length) return 0;
  return (bytes.length - start - 1) * 8 + (32 - Math.clz32(bytes[start]));
}

/** As Go's ssh package: an exponent below 3, even, or over 24 bits is refused (by its length, before its value). */
function checkRsaExponent(exponent: Buffer): void {
  const bits = unsignedBits(exponent);
  if (bits > 24) throw new SshKeyError('invalid ssh public key: exponent too large');
  const significant = Math.ceil(bits / 8);
  const value = significant === 0 ? 0 : exponent.readUIntBE(exponent.length - significant, significant);
  if (value < 3 || value % 2 === 0) throw new SshKeyError('invalid ssh public key: incorrect exponent');
}

/** The first line of a library's message, without sshpk's "Failed to parse … key: " preamble. */
function reason(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = message.split('\n')[0].replace(/^Failed to parse .*? as a valid [\w-]+ format (?:key|certificate): /, '');
  return firstLine.trim() || 'invalid key format';
}

/** What `ssh-keygen -lf` prints for a key blob: `SHA256:` and the unpadded base64 of the blob's SHA-256. */
export function sshFingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}
