import * as openpgp from 'openpgp';
import { makeUser, TestUser, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Issue 12, finding 6: another user's primary key packet, re-tagged as a subkey and bound to the attacker's key
 * (which needs none of the victim's secrets), must neither be stored as a signing subkey nor keep the real owner
 * from adding their key.
 */
describe('GPG key-id squatting', () => {
  let t: TestApp;
  let attacker: TestUser;
  let victim: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    attacker = await makeUser(t);
    victim = await makeUser(t);
  });
  afterAll(() => t.close());

  const generate = (email: string) => openpgp.generateKey({ type: 'ecc', curve: 'ed25519Legacy', userIDs: [{ email }], format: 'object' });
  const hex = (key: { getKeyID(): openpgp.KeyID }) => key.getKeyID().toHex().toUpperCase();

  /** The attacker's public key with `stolen` bound as a subkey carrying `flags`, and no back-signature. */
  async function forge(own: { privateKey: openpgp.PrivateKey; publicKey: openpgp.PublicKey }, stolen: openpgp.PublicKey, flags: number): Promise<string> {
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
      new Date(),
      false,
      openpgp.config,
    );
    const forged = own.publicKey;
    const subkey = new openpgp.Subkey(subkeyPacket, forged);
    subkey.bindingSignatures = [binding];
    forged.subkeys = [subkey];
    return forged.armor();
  }

  it('a re-tagged signing subkey is not stored; a re-tagged encryption subkey yields to the real owner', async () => {
    const victimKey = await generate(victim.email);
    const signing = await forge(await generate(attacker.email), victimKey.publicKey, openpgp.enums.keyFlags.signData);
    const signingUpload = await t.http.post(t.api('/user/gpg_keys')).set(withToken(attacker.token)).send({ armored_public_key: signing }).expect(201);
    expect(signingUpload.body.subkeys).toEqual([]);

    const encrypting = await forge(await generate(attacker.email), victimKey.publicKey, openpgp.enums.keyFlags.encryptCommunication);
    const encryptingUpload = await t.http.post(t.api('/user/gpg_keys')).set(withToken(attacker.token)).send({ armored_public_key: encrypting }).expect(201);
    expect(encryptingUpload.body.subkeys.map((subkey: { key_id: string; can_sign: boolean }) => [subkey.key_id, subkey.can_sign])).toEqual([[hex(victimKey.publicKey), false]]);

    const real = await t.http.post(t.api('/user/gpg_keys')).set(withToken(victim.token)).send({ armored_public_key: victimKey.publicKey.armor() }).expect(201);
    expect(real.body.key_id).toBe(hex(victimKey.publicKey));
    const attackerKeys = (await t.http.get(t.api('/user/gpg_keys')).set(withToken(attacker.token)).expect(200)).body as { subkeys: { key_id: string }[] }[];
    expect(attackerKeys.flatMap((key) => key.subkeys.map((subkey) => subkey.key_id))).not.toContain(hex(victimKey.publicKey));
  });
});
