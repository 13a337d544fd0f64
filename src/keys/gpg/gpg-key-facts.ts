/**
 * What the key service and the key worker share about OpenPGP keys, without loading openpgp: the main thread
 * never needs the library itself (it runs in the worker, openpgp.worker.js), so it is loaded only there.
 */

/** What Anvil keeps of one OpenPGP key, primary or subkey. */
export interface GpgKeyFacts {
  /** 16 uppercase hex digits. */
  keyId: string;
  /** Base64 of the serialized public-key packet (header included), as Forgejo serves it. */
  publicKey: string;
  createdUnix: number;
  /** 0 when the key never expires. */
  expiresUnix: number;
  canSign: boolean;
  canEncryptComms: boolean;
  canEncryptStorage: boolean;
  canCertify: boolean;
}

export interface GpgEntity extends GpgKeyFacts {
  /** Addresses of the identities that carry a valid self-certification and are not revoked, as written. */
  identityEmails: string[];
  /** Subkeys bound to the primary by a valid binding signature. */
  subkeys: GpgKeyFacts[];
  /**
   * The entity (merged when it came in several parts), ASCII-armored, for the plain-text export: its key
   * packets, identities and self-signatures, without third-party certifications, photo IDs or unbound subkeys.
   */
  armored: string;
}

/** The armored text is not a public key ring; the message is the reason after `failed to parse gpg key `. */
export class GpgKeyParseError extends Error {}

/**
 * Largest armored key ring read. openpgp spends microseconds per armor line, so a body of millions of tiny
 * lines would tie up the process for seconds; real keys, even heavily certified ones, stay well below this.
 */
export const MAX_ARMORED_KEY_LENGTH = 1024 * 1024;
