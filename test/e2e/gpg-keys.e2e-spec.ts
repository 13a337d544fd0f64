import * as openpgp from 'openpgp';
import { Clock } from '../../src/common/time';
import { dsaSignatureBomb } from '../support/pgp-attacks';
import { makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';
import { hex, subkeyPackets } from '../support/openpgp-keys';

/**
 * GPG keys. Keys are generated here with openpgp (elliptic
 * curves: milliseconds each).
 */
type KeyPair = { privateKey: openpgp.PrivateKey; publicKey: openpgp.PublicKey };

const CREATED = new Date('2024-01-01T00:00:00Z');
const API_ERROR_URL = 'http://anvil.test/api/swagger';

interface KeyOptions {
  date?: Date;
  keyExpirationTime?: number;
  subkeys?: { sign?: boolean; keyExpirationTime?: number }[];
}

function generate(emails: string[], options: KeyOptions = {}): Promise<KeyPair> {
  return openpgp.generateKey({
    type: 'ecc',
    curve: 'ed25519Legacy',
    userIDs: emails.map((email, index) => ({ name: `Identity ${index}`, email })),
    date: options.date,
    keyExpirationTime: options.keyExpirationTime,
    subkeys: options.subkeys,
    format: 'object',
  });
}

async function sign(text: string, key: openpgp.PrivateKey): Promise<string> {
  const message = await openpgp.createMessage({ binary: new Uint8Array(Buffer.from(text, 'utf8')) });
  return (await openpgp.sign({ message, signingKeys: key, detached: true })) as string;
}

function packetBase64(packet: openpgp.AnyPacket): string {
  const list = new openpgp.PacketList<openpgp.AnyPacket>();
  list.push(packet);
  return Buffer.from(list.write()).toString('base64');
}

describe('GPG keys', () => {
  let t: TestApp;
  let owner: TestUser;
  let other: TestUser;
  let admin: TestUser;
  /** Owner's address (in other case), a stranger's address; expires; an encryption and a signing subkey. */
  let withEmail: KeyPair;
  /** No identity of the owner: can only be added with a signature. */
  let withoutEmail: KeyPair;
  let signingSubkey: KeyPair;
  let revokedIdentity: KeyPair;

  const post = (user: TestUser, body: Record<string, unknown>) => t.http.post(t.api('/user/gpg_keys')).set(withToken(user.token)).send(body);
  const token = async (user: TestUser) => (await t.http.get(t.api('/user/gpg_key_token')).set(withToken(user.token)).expect(200)).text;
  const removeKey = (user: TestUser, id: number) => t.http.delete(t.api(`/user/gpg_keys/${id}`)).set(withToken(user.token));
  const noEmailMessage = (next: string) =>
    `None of the emails attached to the GPG key could be found. It may still be added if you provide a valid signature for the token: ${next}`;
  const badSignatureMessage = (next: string) =>
    `The provided GPG key, signature and token do not match or token is out of date. Provide a valid signature for the token: ${next}`;
  /**
   * The token follows the clock: an answer names the one current when it was made, which is the one read before
   * the request or, when a minute turned meanwhile (a busy machine), the one read after it.
   */
  const expectBadSignature = async (user: TestUser, before: string, message: unknown) => {
    const after = await token(user);
    expect([badSignatureMessage(before), badSignatureMessage(after)]).toContain(message);
  };

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t, { email: `${uniqueName('owner')}@Example.com` });
    other = await makeUser(t);
    admin = await makeUser(t, { admin: true });
    withEmail = await generate([owner.email.toUpperCase(), 'stranger@example.org'], {
      date: CREATED,
      keyExpirationTime: 86400,
      subkeys: [{ keyExpirationTime: 0 }, { sign: true, keyExpirationTime: 7200 }],
    });
    withoutEmail = await generate(['nobody@example.org']);
    signingSubkey = await generate(['signer@example.org'], { subkeys: [{}, { sign: true }] });
    const revoked = await generate([owner.email, 'other@example.org']);
    revoked.privateKey.users[0] = await revoked.privateKey.users[0].revoke(
      revoked.privateKey.keyPacket as openpgp.SecretKeyPacket,
      {},
      undefined,
      openpgp.config,
    );
    revokedIdentity = { privateKey: revoked.privateKey, publicKey: revoked.privateKey.toPublic() };
  });

  afterAll(() => t?.close());

  describe('GET /user/gpg_key_token', () => {
    it('answers 64 lowercase hex digits as text/plain;charset=utf-8', async () => {
      const response = await t.http.get(t.api('/user/gpg_key_token')).set(withToken(owner.token)).expect(200);
      expect(response.headers['content-type']).toBe('text/plain;charset=utf-8');
      expect(response.text).toMatch(/^[0-9a-f]{64}$/);
      expect(await token(other)).not.toBe(response.text);
    });

    it('needs sign-in and the user scope', async () => {
      await t.http.get(t.api('/user/gpg_key_token')).expect(401);
      const repoOnly = await makeUser(t, { scopes: ['read:repository'] });
      await t.http.get(t.api('/user/gpg_key_token')).set(withToken(repoOnly.token)).expect(403);
    });
  });

  describe('POST /user/gpg_keys with an identity that matches a verified address', () => {
    let created: Record<string, any>;

    it('answers 201 with the primary key, its matched emails and nested subkeys', async () => {
      const response = await post(owner, { armored_public_key: withEmail.publicKey.armor() }).expect(201);
      created = response.body;
      const primary = withEmail.publicKey;
      const created_at = '2024-01-01T00:00:00Z';
      expect(Object.keys(created)).toEqual([
        'id',
        'primary_key_id',
        'key_id',
        'public_key',
        'emails',
        'subkeys',
        'can_sign',
        'can_encrypt_comms',
        'can_encrypt_storage',
        'can_certify',
        'verified',
        'created_at',
        'expires_at',
      ]);
      expect(created).toMatchObject({
        primary_key_id: '',
        key_id: hex(primary),
        public_key: packetBase64(primary.keyPacket),
        emails: [{ email: owner.email, verified: true }],
        can_sign: true,
        can_encrypt_comms: false,
        can_encrypt_storage: false,
        can_certify: true,
        verified: false,
        created_at,
        expires_at: '2024-01-02T00:00:00Z',
      });
      expect(created.subkeys).toEqual([
        {
          id: expect.any(Number),
          primary_key_id: hex(primary),
          key_id: hex(primary.subkeys[0]),
          public_key: packetBase64(primary.subkeys[0].keyPacket),
          emails: null,
          subkeys: null,
          can_sign: false,
          can_encrypt_comms: true,
          can_encrypt_storage: true,
          can_certify: false,
          verified: false,
          created_at,
          expires_at: '0001-01-01T00:00:00Z',
        },
        expect.objectContaining({ key_id: hex(primary.subkeys[1]), can_sign: true, can_encrypt_comms: false, expires_at: '2024-01-01T02:00:00Z' }),
      ]);
    });

    it('lists primary keys with their subkeys, for the owner and for other users', async () => {
      const mine = await t.http.get(t.api('/user/gpg_keys')).set(withToken(owner.token)).expect(200);
      expect(mine.headers['x-total-count']).toBe('1');
      expect(mine.body).toEqual([created]);
      const theirs = await t.http
        .get(t.api(`/users/${owner.name}/gpg_keys`))
        .set(withToken(other.token))
        .expect(200);
      expect(theirs.body).toEqual([created]);
      expect((await t.http.get(t.api('/user/gpg_keys')).set(withToken(other.token)).expect(200)).body).toEqual([]);
    });

    it('GET /user/gpg_keys/{id}: own primary and subkeys (then with [] emails and subkeys), admin any, others 404', async () => {
      expect(
        (
          await t.http
            .get(t.api(`/user/gpg_keys/${created.id}`))
            .set(withToken(owner.token))
            .expect(200)
        ).body,
      ).toEqual(created);
      const subkey = (
        await t.http
          .get(t.api(`/user/gpg_keys/${created.subkeys[0].id}`))
          .set(withToken(owner.token))
          .expect(200)
      ).body;
      expect(subkey).toEqual({ ...created.subkeys[0], emails: [], subkeys: [] });
      expect(
        (
          await t.http
            .get(t.api(`/user/gpg_keys/${created.id}`))
            .set(withToken(admin.token))
            .expect(200)
        ).body,
      ).toEqual(created);
      const hidden = await t.http
        .get(t.api(`/user/gpg_keys/${created.id}`))
        .set(withToken(other.token))
        .expect(404);
      expect(hidden.text).toBe('');
      for (const id of ['424242', 'abc', '0', '1e3'])
        await t.http
          .get(t.api(`/user/gpg_keys/${id}`))
          .set(withToken(owner.token))
          .expect(404);
      await t.http.get(t.api(`/user/gpg_keys/${created.id}`)).expect(401);
    });

    it('refuses the same key again, for anyone, as check 4 before check 5', async () => {
      const taken = { message: 'A key with the same id already exists', url: API_ERROR_URL };
      expect((await post(owner, { armored_public_key: withEmail.publicKey.armor() }).expect(422)).body).toEqual(taken);
      // other has no matching address either: the key-id check comes first.
      expect((await post(other, { armored_public_key: withEmail.publicKey.armor() }).expect(422)).body).toEqual(taken);
    });

    it('GET /{username}.gpg exports the armored keys as text/plain', async () => {
      const response = await t.http.get(`/${owner.name}.gpg`).expect(200);
      expect(response.headers['content-type']).toBe('text/plain;charset=utf-8');
      expect(response.text).toMatch(/^-----BEGIN PGP PUBLIC KEY BLOCK-----/);
      const keys = await openpgp.readKeys({ armoredKeys: response.text });
      expect(keys.map(hex)).toEqual([hex(withEmail.publicKey)]);
      expect(keys[0].subkeys.map(hex)).toEqual(withEmail.publicKey.subkeys.map(hex));
    });

    it('DELETE of a subkey id removes that subkey only; the export follows', async () => {
      await removeKey(owner, created.subkeys[0].id).expect(204);
      await t.http
        .get(t.api(`/user/gpg_keys/${created.subkeys[0].id}`))
        .set(withToken(owner.token))
        .expect(404);
      const primary = (
        await t.http
          .get(t.api(`/user/gpg_keys/${created.id}`))
          .set(withToken(owner.token))
          .expect(200)
      ).body;
      expect(primary.subkeys.map((subkey: { id: number }) => subkey.id)).toEqual([created.subkeys[1].id]);
      const keys = await openpgp.readKeys({ armoredKeys: (await t.http.get(`/${owner.name}.gpg`).expect(200)).text });
      expect(keys[0].subkeys.map(hex)).toEqual([hex(withEmail.publicKey.subkeys[1])]);
    });

    it('DELETE: another user 403, unknown 404, anonymous 401, owner 204 with the subkeys', async () => {
      const forbidden = await removeKey(other, created.id).expect(403);
      expect(forbidden.body).toEqual({ message: 'You do not have access to this key', url: API_ERROR_URL });
      await removeKey(other, created.subkeys[1].id).expect(403);
      await removeKey(owner, 9_999_999).expect(404);
      await removeKey(owner, 'x' as unknown as number).expect(404);
      await t.http.delete(t.api(`/user/gpg_keys/${created.id}`)).expect(401);
      await removeKey(owner, created.id).expect(204);
      await t.http
        .get(t.api(`/user/gpg_keys/${created.subkeys[1].id}`))
        .set(withToken(owner.token))
        .expect(404);
      expect((await t.http.get(t.api('/user/gpg_keys')).set(withToken(owner.token)).expect(200)).body).toEqual([]);
      // The key ids are free again.
      const again = await post(owner, { armored_public_key: withEmail.publicKey.armor() }).expect(201);
      await removeKey(admin, again.body.id).expect(204);
      await t.http
        .get(t.api(`/user/gpg_keys/${again.body.id}`))
        .set(withToken(owner.token))
        .expect(404);
    });
  });

  describe('POST /user/gpg_keys refusals', () => {
    it('reports a missing key first', async () => {
      const required = { message: '[ArmoredKey]: Required', url: API_ERROR_URL };
      expect((await post(owner, {}).expect(422)).body).toEqual(required);
      expect((await post(owner, { armored_public_key: '', armored_signature: 'x' }).expect(422)).body).toEqual(required);
    });

    it('refuses a key without a matching identity, naming the token to sign', async () => {
      const next = await token(owner);
      expect((await post(owner, { armored_public_key: withoutEmail.publicKey.armor() }).expect(422)).body).toEqual({
        message: noEmailMessage(next),
        url: API_ERROR_URL,
      });
    });

    it('does not match revoked identities', async () => {
      const response = await post(owner, { armored_public_key: revokedIdentity.publicKey.armor() }).expect(422);
      expect(response.body.message).toMatch(/^None of the emails attached to the GPG key could be found/);
    });

    it('matches only the caller’s own verified addresses', async () => {
      const ownersKey = await generate([owner.email]);
      const response = await post(other, { armored_public_key: ownersKey.publicKey.armor() }).expect(422);
      expect(response.body.message).toMatch(/^None of the emails attached/);
    });

    it('refuses private keys and armored non-keys as parse failures', async () => {
      const parse = await post(owner, { armored_public_key: withoutEmail.privateKey.armor() }).expect(422);
      expect(parse.body.message).toBe('failed to parse gpg key expected a public key block, got a private key');
      const signature = await post(owner, { armored_public_key: await sign('x', withoutEmail.privateKey) }).expect(422);
      expect(signature.body.message).toMatch(/^failed to parse gpg key /);
    });

    it('refuses a key too large to store', async () => {
      const names = Array.from({ length: 16 }, (_, index) => `u${index}.${'n'.repeat(4000)}@example.com`);
      const big = await generate([owner.email, ...names]);
      const response = await post(owner, { armored_public_key: big.publicKey.armor() }).expect(422);
      expect(response.body.message).toBe('failed to parse gpg key key is too large: over 64 KiB without third-party certifications and photo IDs');
    });

    const armored = () => withoutEmail.publicKey.armor();
    const garbageKeys: [string, () => unknown][] = [
      ['whitespace', () => '  \n '],
      ['plain text', () => 'hello'],
      ['an empty armor block', () => '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n-----END PGP PUBLIC KEY BLOCK-----'],
      ['a block of junk', () => '-----BEGIN PGP PUBLIC KEY BLOCK-----\n\n!!!!\n-----END PGP PUBLIC KEY BLOCK-----'],
      ['a truncated key', () => armored().slice(0, armored().length / 2)],
      ['a key with a bad checksum line', () => armored().replace(/\n=[A-Za-z0-9+/]{4}\n/, '\n=AAAA\n')],
      ['a corrupted body', () => armored().replace(/\n([A-Za-z0-9+/]{20})/, '\nAAAAAAAAAAAAAAAAAAAA')],
      ['an SSH key', () => 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIFfVML0oi0bOh8i58XeVbO7Mq7NXYjw8wf4m6uR8JiGA'],
      ['NUL and unicode', () => '\u0000\u00e9\u{1f511}'],
      ['many unterminated armor headers', () => '-----BEGIN PGP PUBLIC KEY BLOCK-----\n'.repeat(30_000)],
      ['over a MiB of short lines', () => 'a\n'.repeat(600_000)],
      ['many distinct armor headers', () => Array.from({ length: 20_000 }, (_, i) => `-----BEGIN PGP X${i}-----\n-----END PGP Y${i}-----\n`).join('')],
      ['a number', () => 42],
      ['an array', () => [armored()]],
    ];

    it('refuses a DSA signature bomb by policy, before any verification', async () => {
      const response = await post(owner, { armored_public_key: dsaSignatureBomb(8192, owner.email, 20) }).expect(422);
      expect(response.body.message).toBe('failed to parse gpg key DSA keys over 3072 bits (or a subgroup over 256 bits) are not accepted');
    });

    it.each(garbageKeys)('answers 422, never 500, to %s as the key', async (_name, value) => {
      const response = await post(owner, { armored_public_key: value() });
      expect(response.status).toBe(422);
      expect(response.body.message).toMatch(/^(failed to parse gpg key |\[ArmoredKey\]: |None of the emails)/);
    });

    const garbageSignatures: [string, () => Promise<unknown>][] = [
      ['plain text', async () => 'not a signature'],
      ['an empty signature block', async () => '-----BEGIN PGP SIGNATURE-----\n\n-----END PGP SIGNATURE-----'],
      ['a public key', async () => withoutEmail.publicKey.armor()],
      ['a truncated signature', async () => (await sign('x', withoutEmail.privateKey)).slice(0, 60)],
      ['NUL', async () => '\u0000'],
    ];

    it.each(garbageSignatures)('answers 422, never 500, to %s as the signature', async (_name, value) => {
      const next = await token(owner);
      const response = await post(owner, { armored_public_key: withoutEmail.publicKey.armor(), armored_signature: await value() }).expect(422);
      await expectBadSignature(owner, next, response.body.message);
    });

    it('answers 422 to a signature that is not a string', async () => {
      expect((await post(owner, { armored_public_key: withoutEmail.publicKey.armor(), armored_signature: 5 }).expect(422)).body.message).toBe(
        '[Signature]: must be a string',
      );
    });
  });

  describe('the signature path (verified keys)', () => {
    it('adds a key without a matching email when it comes with a signature over the token', async () => {
      const next = await token(owner);
      const response = await post(owner, {
        armored_public_key: withoutEmail.publicKey.armor(),
        armored_signature: await sign(next, withoutEmail.privateKey),
      }).expect(201);
      expect(response.body).toMatchObject({ key_id: hex(withoutEmail.publicKey), verified: true, emails: [] });
      expect(response.body.subkeys[0]).toMatchObject({ verified: true, emails: null });
      await removeKey(owner, response.body.id).expect(204);
    });

    it('accepts a signature by a signing subkey, and the token with a trailing \\n or \\r\\n', async () => {
      for (const suffix of ['\n', '\r\n']) {
        const next = await token(owner);
        const signature = await sign(`${next}${suffix}`, signingSubkey.privateKey);
        const signers = (await openpgp.readSignature({ armoredSignature: signature })).getSigningKeyIDs().map((id) => id.toHex().toUpperCase());
        expect(signers).toEqual([hex(signingSubkey.publicKey.subkeys[1])]);
        const response = await post(owner, { armored_public_key: signingSubkey.publicKey.armor(), armored_signature: signature }).expect(201);
        expect(response.body).toMatchObject({ key_id: hex(signingSubkey.publicKey), verified: true });
        await removeKey(owner, response.body.id).expect(204);
      }
    });

    it('refuses a signature over anything but the token, or by a key not submitted', async () => {
      const next = await token(owner);
      const wrongText = await post(owner, {
        armored_public_key: withoutEmail.publicKey.armor(),
        armored_signature: await sign('not the token', withoutEmail.privateKey),
      });
      expect(wrongText.status).toBe(422);
      expect(wrongText.body).toEqual({ message: expect.any(String), url: API_ERROR_URL });
      await expectBadSignature(owner, next, wrongText.body.message);
      const otherToken = await token(other);
      const othersToken = await post(owner, {
        armored_public_key: withoutEmail.publicKey.armor(),
        armored_signature: await sign(otherToken, withoutEmail.privateKey),
      });
      await expectBadSignature(owner, next, othersToken.body.message);
      const otherKey = await post(owner, { armored_public_key: withoutEmail.publicKey.armor(), armored_signature: await sign(next, signingSubkey.privateKey) });
      expect(otherKey.status).toBe(422);
      await expectBadSignature(owner, next, otherKey.body.message);
    });

    it('checks the signature (3) before the key id (4)', async () => {
      const first = await post(owner, { armored_public_key: withEmail.publicKey.armor() }).expect(201);
      const next = await token(other);
      const bad = await post(other, { armored_public_key: withEmail.publicKey.armor(), armored_signature: await sign('x', withoutEmail.privateKey) }).expect(
        422,
      );
      await expectBadSignature(other, next, bad.body.message);
      await removeKey(owner, first.body.id).expect(204);
    });

    it('accepts the handed-out token during the next window, not after', async () => {
      const clock = t.app.get(Clock);
      const start = 1_900_000_020; // 20 s into a window, in the future of any signature made now
      const spy = jest.spyOn(clock, 'nowUnix').mockReturnValue(start);
      try {
        const next = await token(owner);
        const signature = await sign(next, withoutEmail.privateKey);
        spy.mockReturnValue(start + 130); // two windows on: the token is neither current nor next
        const late = await post(owner, { armored_public_key: withoutEmail.publicKey.armor(), armored_signature: signature }).expect(422);
        expect(late.body.message).toMatch(/^The provided GPG key, signature and token do not match/);
        spy.mockReturnValue(start + 60); // the handed-out window is now the current one
        const response = await post(owner, { armored_public_key: withoutEmail.publicKey.armor(), armored_signature: signature }).expect(201);
        expect(response.body.verified).toBe(true);
        await removeKey(owner, response.body.id).expect(204);
      } finally {
        spy.mockRestore();
      }
    });

    it('with a signature, imports only the entity that signed', async () => {
      const ring = new openpgp.PacketList<openpgp.AnyPacket>();
      ring.push(...withoutEmail.publicKey.toPacketList(), ...signingSubkey.publicKey.toPacketList());
      const next = await token(owner);
      const response = await post(owner, {
        armored_public_key: openpgp.armor(openpgp.enums.armor.publicKey, ring.write()),
        armored_signature: await sign(next, signingSubkey.privateKey),
      }).expect(201);
      expect(response.body.key_id).toBe(hex(signingSubkey.publicKey));
      const listed = (await t.http.get(t.api('/user/gpg_keys')).set(withToken(owner.token)).expect(200)).body;
      expect(listed.map((key: { key_id: string }) => key.key_id)).toEqual([hex(signingSubkey.publicKey)]);
      await removeKey(owner, response.body.id).expect(204);
    });
  });

  describe('several entities', () => {
    it('imports every entity of the ring (each must match an email) and answers with the first', async () => {
      const user = await makeUser(t);
      const first = await generate([user.email]);
      const second = await generate([`x@example.org`, user.email]);
      const response = await post(user, { armored_public_key: `${first.publicKey.armor()}\n${second.publicKey.armor()}` }).expect(201);
      expect(response.body.key_id).toBe(hex(first.publicKey));
      const listed = await t.http.get(t.api('/user/gpg_keys')).set(withToken(user.token)).expect(200);
      expect(listed.body.map((key: { key_id: string }) => key.key_id)).toEqual([hex(first.publicKey), hex(second.publicKey)]);
      expect(listed.body[1].emails).toEqual([{ email: user.email, verified: true }]);

      const third = await generate([user.email]);
      const refused = await post(user, { armored_public_key: `${third.publicKey.armor()}\n${withoutEmail.publicKey.armor()}` }).expect(422);
      expect(refused.body.message).toMatch(/^None of the emails attached/);
      // Nothing of a refused ring is stored.
      expect((await t.http.get(t.api('/user/gpg_keys')).set(withToken(user.token)).expect(200)).headers['x-total-count']).toBe('2');
    });

    it('stores exactly one of several concurrent uploads of one key', async () => {
      const user = await makeUser(t);
      const key = (await generate([user.email])).publicKey.armor();
      const responses = await Promise.all([1, 2, 3].map(() => post(user, { armored_public_key: key })));
      expect(responses.map((response) => response.status).sort()).toEqual([201, 422, 422]);
      for (const response of responses.filter((r) => r.status === 422)) expect(response.body.message).toBe('A key with the same id already exists');
      expect((await t.http.get(t.api('/user/gpg_keys')).set(withToken(user.token)).expect(200)).headers['x-total-count']).toBe('1');
    });

    it('merges entities with the same primary key', async () => {
      const user = await makeUser(t);
      const key = (await generate([user.email, 'second@example.org'], { subkeys: [{}, { sign: true }] })).publicKey;
      const parts = new openpgp.PacketList<openpgp.AnyPacket>();
      parts.push(key.keyPacket, ...key.users[0].toPacketList(), ...subkeyPackets(key.subkeys[0]));
      parts.push(key.keyPacket, ...key.users[1].toPacketList(), ...subkeyPackets(key.subkeys[1]));
      const response = await post(user, { armored_public_key: openpgp.armor(openpgp.enums.armor.publicKey, parts.write()) }).expect(201);
      expect(response.body.key_id).toBe(hex(key));
      expect(response.body.subkeys.map((subkey: { key_id: string }) => subkey.key_id)).toEqual(key.subkeys.map(hex));
      expect((await t.http.get(t.api('/user/gpg_keys')).set(withToken(user.token)).expect(200)).headers['x-total-count']).toBe('1');
    });

    it('key ids are unique across primaries and subkeys: a stored subkey bound to another primary is refused', async () => {
      const user = await makeUser(t);
      const stored = (await generate([user.email])).publicKey;
      await post(user, { armored_public_key: stored.armor() }).expect(201);
      const thief = await generate([user.email]);
      const primary = thief.privateKey.keyPacket as openpgp.SecretKeyPacket;
      const foreign = stored.subkeys[0];
      // Without a binding by the new primary, the foreign subkey is simply not part of the key.
      const unbound = new openpgp.PacketList<openpgp.AnyPacket>();
      unbound.push(...thief.publicKey.toPacketList(), ...subkeyPackets(foreign));
      const response = await post(user, { armored_public_key: openpgp.armor(openpgp.enums.armor.publicKey, unbound.write()) }).expect(201);
      expect(response.body.subkeys.map((subkey: { key_id: string }) => subkey.key_id)).toEqual(thief.publicKey.subkeys.map(hex));
      await removeKey(user, response.body.id).expect(204);
      // Properly bound by the new primary, it collides with the stored subkey id.
      const binding = new openpgp.SignaturePacket();
      binding.signatureType = openpgp.enums.signature.subkeyBinding;
      binding.publicKeyAlgorithm = primary.algorithm;
      binding.hashAlgorithm = openpgp.enums.hash.sha256;
      binding.keyFlags = new Uint8Array([openpgp.enums.keyFlags.encryptCommunication | openpgp.enums.keyFlags.encryptStorage]);
      await (binding as unknown as { sign(key: unknown, data: unknown, date: Date, detached: boolean, config: openpgp.Config): Promise<void> }).sign(
        primary,
        { key: primary, bind: foreign.keyPacket },
        new Date(),
        false,
        openpgp.config,
      );
      const bound = new openpgp.PacketList<openpgp.AnyPacket>();
      bound.push(...thief.publicKey.toPacketList(), foreign.keyPacket, binding);
      const refused = await post(user, { armored_public_key: openpgp.armor(openpgp.enums.armor.publicKey, bound.write()) }).expect(422);
      expect(refused.body.message).toBe('A key with the same id already exists');
    });
  });

  describe('visibility, paging and user deletion', () => {
    it('GET /users/{u}/gpg_keys: scope 403 → anonymous 401 → unknown 404 → public-only 403 → invisible 404', async () => {
      const repoOnly = await makeUser(t, { scopes: ['read:repository'] });
      await t.http
        .get(t.api(`/users/${owner.name}/gpg_keys`))
        .set(withToken(repoOnly.token))
        .expect(403);
      await t.http.get(t.api(`/users/nobody-${uniqueName()}/gpg_keys`)).expect(401);
      await t.http
        .get(t.api(`/users/nobody-${uniqueName()}/gpg_keys`))
        .set(withToken(owner.token))
        .expect(404);
      const hidden = await makeUser(t, { visibility: 'private' });
      const limited = await makeUser(t, { visibility: 'limited' });
      const publicOnly = await makeUser(t, { scopes: ['read:user', 'public-only'] });
      const refused = await t.http
        .get(t.api(`/users/${limited.name}/gpg_keys`))
        .set(withToken(publicOnly.token))
        .expect(403);
      expect(refused.body.message).toBe('token scope is limited to public users');
      await t.http
        .get(t.api(`/users/${limited.name}/gpg_keys`))
        .set(withToken(other.token))
        .expect(200);
      await t.http
        .get(t.api(`/users/${hidden.name}/gpg_keys`))
        .set(withToken(other.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${hidden.name}/gpg_keys`))
        .set(withToken(admin.token))
        .expect(200);
      await t.http.get(`/${hidden.name}.gpg`).expect(404);
      await t.http.get(`/${hidden.name}.gpg`).set(withToken(hidden.token)).expect(200);
      await t.http.get(`/nobody-${uniqueName()}.gpg`).expect(404);
    });

    it('pages primary keys with X-Total-Count and Link', async () => {
      const user = await makeUser(t);
      for (let i = 0; i < 3; i++) await post(user, { armored_public_key: (await generate([user.email])).publicKey.armor() }).expect(201);
      const page = await t.http
        .get(t.api(`/users/${user.name}/gpg_keys`))
        .query({ limit: 2, page: 2 })
        .set(withToken(other.token))
        .expect(200);
      expect(page.body).toHaveLength(1);
      expect(page.body[0].subkeys).toHaveLength(1);
      expect(page.headers['x-total-count']).toBe('3');
      expect(page.headers.link).toContain('rel="first"');
    });

    it('the export of a user without keys says so', async () => {
      const response = await t.http.get(`/${other.name}.gpg`).expect(200);
      expect(response.text).toContain("Comment: This user hasn't uploaded any GPG keys.");
    });

    it('deleting a user deletes their keys', async () => {
      const user = await makeUser(t);
      const key = await generate([user.email]);
      await post(user, { armored_public_key: key.publicKey.armor() }).expect(201);
      await t.http
        .delete(t.api(`/admin/users/${user.name}`))
        .set(withToken(admin.token))
        .expect(204);
      const next = await token(other);
      await post(other, { armored_public_key: key.publicKey.armor(), armored_signature: await sign(next, key.privateKey) }).expect(201);
    });
  });
});
