import * as openpgp from 'openpgp';
import { makeUser, TestUser, withToken } from '../support/factories';
import { bindStolenSubkey } from '../support/pgp-attacks';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * Another user's primary key packet, re-tagged as a subkey and bound to the attacker's key
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

  const forge = async (own: { privateKey: openpgp.PrivateKey; publicKey: openpgp.PublicKey }, stolen: openpgp.PublicKey, flags: number) =>
    (await bindStolenSubkey(own, stolen, flags)).armor();

  it('a re-tagged signing subkey is not stored; a re-tagged encryption subkey yields to the real owner', async () => {
    const victimKey = await generate(victim.email);
    const signing = await forge(await generate(attacker.email), victimKey.publicKey, openpgp.enums.keyFlags.signData);
    const signingUpload = await t.http.post(t.api('/user/gpg_keys')).set(withToken(attacker.token)).send({ armored_public_key: signing }).expect(201);
    expect(signingUpload.body.subkeys).toEqual([]);

    const encrypting = await forge(await generate(attacker.email), victimKey.publicKey, openpgp.enums.keyFlags.encryptCommunication);
    const encryptingUpload = await t.http.post(t.api('/user/gpg_keys')).set(withToken(attacker.token)).send({ armored_public_key: encrypting }).expect(201);
    expect(encryptingUpload.body.subkeys.map((subkey: { key_id: string; can_sign: boolean }) => [subkey.key_id, subkey.can_sign])).toEqual([
      [hex(victimKey.publicKey), false],
    ]);

    const real = await t.http.post(t.api('/user/gpg_keys')).set(withToken(victim.token)).send({ armored_public_key: victimKey.publicKey.armor() }).expect(201);
    expect(real.body.key_id).toBe(hex(victimKey.publicKey));
    const attackerKeys = (await t.http.get(t.api('/user/gpg_keys')).set(withToken(attacker.token)).expect(200)).body as { subkeys: { key_id: string }[] }[];
    expect(attackerKeys.flatMap((key) => key.subkeys.map((subkey) => subkey.key_id))).not.toContain(hex(victimKey.publicKey));
  });
});
