import { execFileSync } from 'node:child_process';
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

/**
 * SSH keys. Every fixture is made here with ssh-keygen (and Node's crypto
 * for the forms ssh-keygen cannot write), and every fingerprint is checked against `ssh-keygen -lf`.
 */
interface KeyPair {
  /** The .pub line as ssh-keygen wrote it. */
  line: string;
  file: string;
  fingerprint: string;
}

describe('SSH keys', () => {
  let t: TestApp;
  let dir: string;
  let owner: TestUser;
  let other: TestUser;
  let admin: TestUser;
  const keys: Record<string, KeyPair> = {};
  let dsaAvailable = true;

  const keygen = (...args: string[]) => execFileSync('ssh-keygen', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  const fingerprintOf = (file: string) => keygen('-lf', file).split(' ')[1];
  const generate = (name: string, ...typeArgs: string[]): KeyPair => {
    keygen('-q', '-N', '', '-C', `${name} key with spaces`, '-f', name, ...typeArgs);
    const file = `${name}.pub`;
    return { file, line: fs.readFileSync(path.join(dir, file), 'utf8').trim(), fingerprint: fingerprintOf(file) };
  };
  const fromLine = (name: string, line: string): KeyPair => {
    fs.writeFileSync(path.join(dir, name), `${line}\n`);
    return { file: name, line, fingerprint: fingerprintOf(name) };
  };
  const post = (user: TestUser, body: Record<string, unknown>) => t.http.post(t.api('/user/keys')).set(withToken(user.token)).send(body);
  const remove = (user: TestUser, id: number) => t.http.delete(t.api(`/user/keys/${id}`)).set(withToken(user.token));

  beforeAll(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-ssh-keys-'));
    keys.ed25519 = generate('ed25519', '-t', 'ed25519');
    keys.ecdsa256 = generate('ecdsa256', '-t', 'ecdsa', '-b', '256');
    keys.ecdsa384 = generate('ecdsa384', '-t', 'ecdsa', '-b', '384');
    keys.ecdsa521 = generate('ecdsa521', '-t', 'ecdsa', '-b', '521');
    keys.rsa2048 = generate('rsa2048', '-t', 'rsa', '-b', '2048');
    keys.rsa3072 = generate('rsa3072', '-t', 'rsa', '-b', '3072');
    keys.spare1 = generate('spare1', '-t', 'ed25519');
    keys.spare2 = generate('spare2', '-t', 'ed25519');
    keys.spare3 = generate('spare3', '-t', 'ed25519');
    try {
      keys.dsa = generate('dsa', '-t', 'dsa');
    } catch {
      dsaAvailable = false; // newer OpenSSH builds dropped DSA; the PEM test below still covers it
    }
    // Certificates: signed by a throw-away CA; measured and fingerprinted by the key inside.
    keys.ca = generate('ca', '-t', 'ed25519');
    keys.certified = generate('certified', '-t', 'ed25519');
    keygen('-q', '-s', 'ca', '-I', 'anvil-test', '-n', 'alice', 'certified.pub');
    keys.certificate = {
      file: 'certified-cert.pub',
      line: fs.readFileSync(path.join(dir, 'certified-cert.pub'), 'utf8').trim(),
      fingerprint: fingerprintOf('certified-cert.pub'),
    };
    keygen('-q', '-s', 'ca', '-I', 'anvil-test', '-n', 'alice', 'rsa2048.pub');
    keys.weakCertificate = { file: 'rsa2048-cert.pub', line: fs.readFileSync(path.join(dir, 'rsa2048-cert.pub'), 'utf8').trim(), fingerprint: '' };
    // Security-key (FIDO) public keys cannot be generated without a token: their blobs are built by hand.
    keys.skEd25519 = fromLine(
      'sk-ed25519.pub',
      `sk-ssh-ed25519@openssh.com ${sshBlob('sk-ssh-ed25519@openssh.com', randomBytes(32), 'ssh:').toString('base64')} fido`,
    );
    const point = p256Point();
    keys.skEcdsa = fromLine(
      'sk-ecdsa.pub',
      `sk-ecdsa-sha2-nistp256@openssh.com ${sshBlob('sk-ecdsa-sha2-nistp256@openssh.com', 'nistp256', point, 'ssh:').toString('base64')} fido`,
    );

    t = await startTestApp();
    owner = await makeUser(t);
    other = await makeUser(t);
    admin = await makeUser(t, { admin: true });
  });

  afterAll(async () => {
    await t?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  describe('POST /user/keys accepts every format and stores the normalised key', () => {
    const accepted: [string, () => { input: string; expected: KeyPair; storedType: string; comment: string }][] = [
      ['ed25519 one-liner', () => ({ input: keys.ed25519.line, expected: keys.ed25519, storedType: 'ssh-ed25519', comment: ' ed25519 key with spaces' })],
      ['ecdsa 256', () => ({ input: keys.ecdsa256.line, expected: keys.ecdsa256, storedType: 'ecdsa-sha2-nistp256', comment: ' ecdsa256 key with spaces' })],
      ['ecdsa 384', () => ({ input: keys.ecdsa384.line, expected: keys.ecdsa384, storedType: 'ecdsa-sha2-nistp384', comment: ' ecdsa384 key with spaces' })],
      ['ecdsa 521', () => ({ input: keys.ecdsa521.line, expected: keys.ecdsa521, storedType: 'ecdsa-sha2-nistp521', comment: ' ecdsa521 key with spaces' })],
      ['rsa 3072', () => ({ input: keys.rsa3072.line, expected: keys.rsa3072, storedType: 'ssh-rsa', comment: ' rsa3072 key with spaces' })],
      ['sk-ssh-ed25519', () => ({ input: keys.skEd25519.line, expected: keys.skEd25519, storedType: 'sk-ssh-ed25519@openssh.com', comment: ' fido' })],
      [
        'sk-ecdsa-sha2-nistp256',
        () => ({ input: keys.skEcdsa.line, expected: keys.skEcdsa, storedType: 'sk-ecdsa-sha2-nistp256@openssh.com', comment: ' fido' }),
      ],
      [
        'an OpenSSH certificate (fingerprint of the key inside)',
        () => ({
          input: keys.certificate.line,
          expected: keys.certificate,
          storedType: 'ssh-ed25519-cert-v01@openssh.com',
          comment: ' certified key with spaces',
        }),
      ],
      [
        'RFC 4716',
        () => ({ input: keygen('-e', '-m', 'RFC4716', '-f', keys.ecdsa384.file), expected: keys.ecdsa384, storedType: 'ecdsa-sha2-nistp384', comment: '' }),
      ],
      ['PEM PKIX (rsa)', () => ({ input: keygen('-e', '-m', 'PKCS8', '-f', keys.rsa3072.file), expected: keys.rsa3072, storedType: 'ssh-rsa', comment: '' })],
      [
        'PEM PKIX (ecdsa)',
        () => ({ input: keygen('-e', '-m', 'PKCS8', '-f', keys.ecdsa521.file), expected: keys.ecdsa521, storedType: 'ecdsa-sha2-nistp521', comment: '' }),
      ],
      [
        'PEM PKCS#1 RSA PUBLIC KEY',
        () => ({ input: keygen('-e', '-m', 'PEM', '-f', keys.rsa3072.file), expected: keys.rsa3072, storedType: 'ssh-rsa', comment: '' }),
      ],
      [
        'a type-less blob with a comment',
        () => ({
          input: keys.ed25519.line.split(' ').slice(1).join(' '),
          expected: keys.ed25519,
          storedType: 'ssh-ed25519',
          comment: ' ed25519 key with spaces',
        }),
      ],
      [
        'a one-liner wrapped over several lines, with surrounding whitespace',
        () => {
          const [type, blob, ...comment] = keys.rsa3072.line.split(' ');
          const wrapped = `${blob.slice(0, 100)}\n${blob.slice(100, 300)}\r\n${blob.slice(300)}`;
          return {
            input: `\n  ${type} ${wrapped} ${comment.join(' ')}  \n`,
            expected: keys.rsa3072,
            storedType: 'ssh-rsa',
            comment: ' rsa3072 key with spaces',
          };
        },
      ],
    ];

    it.each(accepted)('%s', async (_name, fixture) => {
      const { input, expected, storedType, comment } = fixture();
      const response = await post(owner, { title: uniqueName('title'), key: input }).expect(201);
      const blob = expected.line.split(' ')[1];
      expect(response.body.key).toBe(`${storedType} ${blob}${comment}`);
      expect(response.body.fingerprint).toBe(expected.fingerprint);
      expect(response.body.fingerprint).toMatch(/^SHA256:[A-Za-z0-9+/]{43}$/);
      await remove(owner, response.body.id).expect(204);
    });

    it('converts a PEM PKIX Ed25519 key (which ssh-keygen cannot write) to OpenSSH form', async () => {
      const der = generateKeyPairSync('ed25519').publicKey.export({ type: 'spki', format: 'der' });
      const raw = der.subarray(der.length - 32);
      const blob = sshBlob('ssh-ed25519', raw);
      const pem = `-----BEGIN PUBLIC KEY-----\n${der.toString('base64')}\n-----END PUBLIC KEY-----\n`;
      const response = await post(owner, { title: uniqueName('title'), key: pem }).expect(201);
      expect(response.body.key).toBe(`ssh-ed25519 ${blob.toString('base64')}`);
      expect(response.body.fingerprint).toBe(`SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`);
      await remove(owner, response.body.id).expect(204);
    });

    it('answers 201 with the PublicKey shape: user and key_type for the owner, verified false, updated = created', async () => {
      const title = uniqueName('laptop');
      const response = await post(owner, { title, key: keys.ed25519.line, read_only: true }).expect(201);
      expect(Object.keys(response.body)).toEqual(['id', 'key', 'url', 'title', 'fingerprint', 'created_at', 'updated_at', 'user', 'key_type', 'verified']);
      expect(response.body).toMatchObject({
        url: `http://anvil.test/api/v1/user/keys/${response.body.id}`,
        title,
        key_type: 'user',
        verified: false,
        user: { id: owner.user.id, login: owner.name, email: owner.email },
      });
      expect(response.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(response.body.updated_at).toBe(response.body.created_at);
      expect(response.body).not.toHaveProperty('read_only');
      await remove(owner, response.body.id).expect(204);
    });

    it('accepts form-encoded bodies as Forgejo clients send them', async () => {
      const response = await t.http
        .post(t.api('/user/keys'))
        .set(withToken(owner.token))
        .type('form')
        .send({ title: uniqueName('form'), key: keys.spare3.line })
        .expect(201);
      expect(response.body.fingerprint).toBe(keys.spare3.fingerprint);
      await remove(owner, response.body.id).expect(204);
    });
  });

  describe('POST /user/keys refusals', () => {
    const refusal = (reason: string) => ({ message: `Invalid key content: ${reason}`, url: 'http://anvil.test/api/swagger' });

    it('reports a missing title before a missing key', async () => {
      expect((await post(owner, {}).expect(422)).body.message).toBe('[Title]: Required');
      expect((await post(owner, { key: keys.ed25519.line }).expect(422)).body.message).toBe('[Title]: Required');
      expect((await post(owner, { title: 'x' }).expect(422)).body.message).toBe('[Key]: Required');
      expect((await post(owner, { title: 'x', key: '' }).expect(422)).body.message).toBe('[Key]: Required');
      expect((await post(owner, { title: 'x'.repeat(51), key: keys.ed25519.line }).expect(422)).body.message).toBe('[Title]: MaxSize');
    });

    it('refuses a 2048-bit RSA key, and a certificate around one', async () => {
      expect((await post(owner, { title: 'rsa', key: keys.rsa2048.line }).expect(422)).body).toEqual(refusal('key length is not enough: got 2048, needs 3071'));
      expect((await post(owner, { title: 'rsa', key: keys.weakCertificate.line }).expect(422)).body).toEqual(
        refusal('key length is not enough: got 2048, needs 3071'),
      );
    });

    it('refuses DSA keys, in OpenSSH and in PEM form', async () => {
      if (dsaAvailable) {
        expect((await post(owner, { title: 'dsa', key: keys.dsa.line }).expect(422)).body).toEqual(refusal('key type is not allowed: dsa'));
      }
      const pem = generateKeyPairSync('dsa', { modulusLength: 2048, divisorLength: 256 }).publicKey.export({ type: 'spki', format: 'pem' }) as string;
      expect((await post(owner, { title: 'dsa', key: pem }).expect(422)).body).toEqual(refusal('key type is not allowed: dsa'));
    });

    it('refuses private keys of every PEM flavour', async () => {
      const openssh = fs.readFileSync(path.join(dir, 'ed25519'), 'utf8');
      const pkcs8 = generateKeyPairSync('ec', { namedCurve: 'P-256' }).privateKey.export({ type: 'pkcs8', format: 'pem' }) as string;
      const pkcs1 = generateKeyPairSync('rsa', { modulusLength: 1024 }).privateKey.export({ type: 'pkcs1', format: 'pem' }) as string;
      for (const key of [openssh, pkcs8, pkcs1, '-----BEGIN ENCRYPTED PRIVATE KEY-----\nAAAA\n']) {
        expect((await post(owner, { title: 'private', key }).expect(422)).body).toEqual(refusal('the provided key is a private key'));
      }
    });

    it('refuses a given type that does not match the blob', async () => {
      const blob = keys.ed25519.line.split(' ')[1];
      expect((await post(owner, { title: 'x', key: `ssh-rsa ${blob} me` }).expect(422)).body).toEqual(
        refusal('key type and content does not match: ssh-rsa - ssh-ed25519'),
      );
    });

    it('refuses more than one key', async () => {
      const body = { title: 'two', key: `${keys.ed25519.line}\n${keys.ecdsa256.line}` };
      expect((await post(owner, body).expect(422)).body).toEqual(refusal('only a single line with a single key please'));
    });

    it('refuses blobs that do not parse as SSH keys', async () => {
      const [type, blob] = keys.ecdsa256.line.split(' ');
      const bytes = Buffer.from(blob, 'base64');
      const offCurve = Buffer.from(bytes);
      offCurve[offCurve.length - 1] ^= 0x01;
      const cases: [string, string][] = [
        [`${type} ${Buffer.concat([bytes, Buffer.from([0, 0, 0, 1, 7])]).toString('base64')}`, 'invalid ssh public key: trailing junk in public key'],
        [`${type} ${bytes.subarray(0, 40).toString('base64')}`, 'invalid ssh public key: truncated data'],
        [`${type} ${offCurve.toString('base64')}`, 'invalid ssh public key: invalid curve point'],
        [`ssh-ed25519 ${sshBlob('ssh-ed25519', randomBytes(31)).toString('base64')}`, 'invalid ssh public key: invalid size for Ed25519 key'],
        [`ssh-foo ${sshBlob('ssh-foo', randomBytes(32)).toString('base64')}`, 'invalid ssh public key: unknown key algorithm: ssh-foo'],
        ['ssh-ed25519 not*base64', 'invalid ssh public key: illegal base64 data'],
        [`${keys.spare1.line} ${'é'.repeat(20_000)}`, 'the key comment is too long'],
      ];
      for (const [key, reason] of cases) expect((await post(owner, { title: 'bad', key }).expect(422)).body).toEqual(refusal(reason));
    });

    it('refuses a fingerprint stored for any user, the caller included, then a title the caller already used', async () => {
      const created = await post(owner, { title: 'first', key: keys.spare1.line }).expect(201);
      const taken = { message: 'Key content has been used as non-deploy key', url: 'http://anvil.test/api/swagger' };
      expect((await post(owner, { title: 'again', key: keys.spare1.line }).expect(422)).body).toEqual(taken);
      expect((await post(other, { title: 'first', key: keys.spare1.line }).expect(422)).body).toEqual(taken);
      // The same key in another format is the same key.
      expect((await post(other, { title: 'rfc', key: keygen('-e', '-m', 'RFC4716', '-f', keys.spare1.file) }).expect(422)).body).toEqual(taken);
      expect((await post(owner, { title: 'first', key: keys.spare2.line }).expect(422)).body.message).toBe('Key title has been used');
      // Titles are per user.
      const elsewhere = await post(other, { title: 'first', key: keys.spare2.line }).expect(201);
      await remove(other, elsewhere.body.id).expect(204);
      await remove(owner, created.body.id).expect(204);
    });

    const garbage: [string, unknown][] = [
      ['whitespace', '   \n\t '],
      ['a lone type', 'ssh-ed25519'],
      ['an empty blob', 'ssh-ed25519 AAAA'],
      ['a blob of zeros', 'AAAAAAAAAAAA'],
      ['a huge length prefix', `ssh-rsa ${Buffer.from([0xff, 0xff, 0xff, 0xff, 1, 2]).toString('base64')}`],
      ['binary type name', `x ${Buffer.from([0, 0, 0, 3, 0, 1, 2]).toString('base64')}`],
      ['an empty RFC 4716 block', '---- BEGIN SSH2 PUBLIC KEY ----\n---- END SSH2 PUBLIC KEY ----'],
      ['an RFC 4716 block of junk', '---- BEGIN SSH2 PUBLIC KEY ----\nComment: "x"\n@@@@\n---- END SSH2 PUBLIC KEY ----'],
      ['an empty PEM block', '-----BEGIN PUBLIC KEY-----\n-----END PUBLIC KEY-----'],
      ['an unterminated PEM block', '-----BEGIN PUBLIC KEY-----\nMIIB'],
      ['PEM with non-key DER', '-----BEGIN PUBLIC KEY-----\nMAMCAQU=\n-----END PUBLIC KEY-----'],
      ['PEM of an X25519 key', generateKeyPairSync('x25519').publicKey.export({ type: 'spki', format: 'pem' })],
      ['PEM of a secp256k1 key', generateKeyPairSync('ec', { namedCurve: 'secp256k1' }).publicKey.export({ type: 'spki', format: 'pem' })],
      ['a certificate with its tail cut', 'ssh-ed25519-cert-v01@openssh.com AAAAIHNzaC1lZDI1NTE5LWNlcnQtdjAxQG9wZW5zc2guY29tAAAAAA=='],
      ['NUL and unicode', 'ssh-ed25519 \u0000\u00e9\u{1f511}'],
      ['a very long line', `ssh-rsa ${'A'.repeat(200_000)}`],
      ['many unterminated PEM headers', '-----BEGIN PUBLIC KEY-----\n'.repeat(30_000)],
      ['many PEM headers on one line', `-----BEGIN ${'x'.repeat(500_000)}`],
      ['a number', 12345],
      ['an array', ['ssh-ed25519']],
      ['an object', { key: 'x' }],
      ['a boolean', true],
    ];

    it.each(garbage)('answers 422, never 500, to %s', async (_name, key) => {
      const response = await post(owner, { title: 'garbage', key });
      expect(response.status).toBe(422);
      expect(response.body.message).toMatch(/^(Invalid key content: |\[Key\]: )/);
    });

    it('stores exactly one of several concurrent uploads of one key, or of one title', async () => {
      const sameKey = await Promise.all([1, 2, 3, 4].map((i) => post(owner, { title: `race-${i}`, key: keys.spare2.line })));
      expect(sameKey.map((response) => response.status).sort()).toEqual([201, 422, 422, 422]);
      for (const response of sameKey.filter((r) => r.status === 422)) expect(response.body.message).toBe('Key content has been used as non-deploy key');
      const sameTitle = await Promise.all([keys.spare1, keys.spare3].map((key) => post(owner, { title: 'race-title', key: key.line })));
      expect(sameTitle.map((response) => response.status).sort()).toEqual([201, 422]);
      expect(sameTitle.find((r) => r.status === 422)!.body.message).toBe('Key title has been used');
      for (const response of [...sameKey, ...sameTitle].filter((r) => r.status === 201)) await remove(owner, response.body.id).expect(204);
    });

    it('answers 400 to malformed JSON and 422 to a missing content type', async () => {
      await t.http.post(t.api('/user/keys')).set(withToken(owner.token)).set('Content-Type', 'application/json').send('{"title":').expect(400);
      const response = await t.http.post(t.api('/user/keys')).set(withToken(owner.token)).send(Buffer.from('x'));
      expect(response.status).toBe(422);
    });
  });

  describe('reading and deleting', () => {
    let ownKey: { id: number; fingerprint: string };

    beforeAll(async () => {
      ownKey = (await post(owner, { title: uniqueName('read'), key: keys.ecdsa256.line }).expect(201)).body;
    });

    it('GET /user/keys lists the caller’s keys with user and key_type', async () => {
      const response = await t.http.get(t.api('/user/keys')).set(withToken(owner.token)).expect(200);
      expect(response.headers['x-total-count']).toBe('1');
      expect(response.body).toEqual([expect.objectContaining({ id: ownKey.id, key_type: 'user', user: expect.objectContaining({ login: owner.name }) })]);
      expect((await t.http.get(t.api('/user/keys')).set(withToken(other.token)).expect(200)).body).toEqual([]);
    });

    it('GET /user/keys/{id}: the owner and a site admin read it; anyone else gets 404', async () => {
      const mine = await t.http
        .get(t.api(`/user/keys/${ownKey.id}`))
        .set(withToken(owner.token))
        .expect(200);
      expect(mine.body).toMatchObject({ id: ownKey.id, key_type: 'user', user: { login: owner.name } });
      const asAdmin = await t.http
        .get(t.api(`/user/keys/${ownKey.id}`))
        .set(withToken(admin.token))
        .expect(200);
      expect(asAdmin.body).toMatchObject({ id: ownKey.id, key_type: 'user', user: { login: owner.name } });
      const hidden = await t.http
        .get(t.api(`/user/keys/${ownKey.id}`))
        .set(withToken(other.token))
        .expect(404);
      expect(hidden.text).toBe('');
      for (const id of ['999999', 'abc', '1.5', '-1', '0', '99999999999999999999']) {
        await t.http
          .get(t.api(`/user/keys/${id}`))
          .set(withToken(owner.token))
          .expect(404);
      }
      await t.http.get(t.api(`/user/keys/${ownKey.id}`)).expect(401);
    });

    it('?fingerprint= on /user/keys searches every user; user and key_type only on the caller’s own keys', async () => {
      const found = await t.http.get(t.api('/user/keys')).query({ fingerprint: ownKey.fingerprint }).set(withToken(other.token)).expect(200);
      expect(found.body).toHaveLength(1);
      expect(found.body[0].id).toBe(ownKey.id);
      expect(found.body[0]).not.toHaveProperty('user');
      expect(found.body[0]).not.toHaveProperty('key_type');
      const asAdmin = await t.http.get(t.api('/user/keys')).query({ fingerprint: ownKey.fingerprint }).set(withToken(admin.token)).expect(200);
      expect(asAdmin.body[0]).toMatchObject({ key_type: 'user', user: { login: owner.name } });
      const unknown = await t.http.get(t.api('/user/keys')).query({ fingerprint: 'SHA256:nope' }).set(withToken(owner.token)).expect(200);
      expect(unknown.body).toEqual([]);
      expect(unknown.headers['x-total-count']).toBe('0');
    });

    it('GET /users/{u}/keys lists that user’s keys; ?fingerprint= searches only them', async () => {
      const asOther = await t.http
        .get(t.api(`/users/${owner.name}/keys`))
        .set(withToken(other.token))
        .expect(200);
      expect(asOther.body.map((key: { id: number }) => key.id)).toEqual([ownKey.id]);
      expect(asOther.body[0]).not.toHaveProperty('user');
      expect(asOther.body[0].url).toBe(`http://anvil.test/api/v1/user/keys/${ownKey.id}`);
      const asSelf = await t.http
        .get(t.api(`/users/${owner.name.toUpperCase()}/keys`))
        .set(withToken(owner.token))
        .expect(200);
      expect(asSelf.body[0]).toMatchObject({ key_type: 'user', user: { login: owner.name } });
      const filtered = await t.http
        .get(t.api(`/users/${owner.name}/keys`))
        .query({ fingerprint: ownKey.fingerprint })
        .set(withToken(other.token))
        .expect(200);
      expect(filtered.body).toHaveLength(1);
      const elsewhere = await t.http
        .get(t.api(`/users/${other.name}/keys`))
        .query({ fingerprint: ownKey.fingerprint })
        .set(withToken(owner.token))
        .expect(200);
      expect(elsewhere.body).toEqual([]);
    });

    it('GET /users/{u}/keys: scope 403 → anonymous 401 → unknown 404 → public-only 403 → invisible 404', async () => {
      const noUserScope = await makeUser(t, { scopes: ['read:repository'] });
      const scopeError = await t.http
        .get(t.api(`/users/nobody-${uniqueName()}/keys`))
        .set(withToken(noUserScope.token))
        .expect(403);
      expect(scopeError.body.message).toBe('token does not have at least one of required scope(s): [read:user]');
      const anonymous = await t.http.get(t.api(`/users/nobody-${uniqueName()}/keys`)).expect(401);
      expect(anonymous.body.message).toBe('token is required');
      await t.http
        .get(t.api(`/users/nobody-${uniqueName()}/keys`))
        .set(withToken(owner.token))
        .expect(404);
      const limited = await makeUser(t, { visibility: 'limited' });
      const hidden = await makeUser(t, { visibility: 'private' });
      const publicOnly = await makeUser(t, { scopes: ['read:user', 'public-only'] });
      const limitedToPublicOnly = await t.http
        .get(t.api(`/users/${limited.name}/keys`))
        .set(withToken(publicOnly.token))
        .expect(403);
      expect(limitedToPublicOnly.body.message).toBe('token scope is limited to public users');
      await t.http
        .get(t.api(`/users/${limited.name}/keys`))
        .set(withToken(other.token))
        .expect(200);
      await t.http
        .get(t.api(`/users/${hidden.name}/keys`))
        .set(withToken(other.token))
        .expect(404);
      await t.http
        .get(t.api(`/users/${hidden.name}/keys`))
        .set(withToken(hidden.token))
        .expect(200);
      await t.http
        .get(t.api(`/users/${hidden.name}/keys`))
        .set(withToken(admin.token))
        .expect(200);
    });

    it('/user/keys needs the user scope and a signed-in caller', async () => {
      const noUserScope = await makeUser(t, { scopes: ['write:repository'] });
      await t.http.get(t.api('/user/keys')).set(withToken(noUserScope.token)).expect(403);
      const readOnly = await makeUser(t, { scopes: ['read:user'] });
      const refused = await t.http.post(t.api('/user/keys')).set(withToken(readOnly.token)).send({ title: 'x', key: keys.spare1.line }).expect(403);
      expect(refused.body.message).toBe('token does not have at least one of required scope(s): [write:user]');
      await t.http.get(t.api('/user/keys')).expect(401);
      await t.http.post(t.api('/user/keys')).send({ title: 'x', key: keys.spare1.line }).expect(401);
    });

    it('DELETE /user/keys/{id}: unknown 404; another user 403; admin or owner 204', async () => {
      const response = await t.http
        .delete(t.api(`/user/keys/${ownKey.id}`))
        .set(withToken(other.token))
        .expect(403);
      expect(response.body).toEqual({ message: 'You do not have access to this key', url: 'http://anvil.test/api/swagger' });
      await t.http.delete(t.api('/user/keys/987654')).set(withToken(owner.token)).expect(404);
      await t.http.delete(t.api('/user/keys/abc')).set(withToken(owner.token)).expect(404);
      await t.http.delete(t.api(`/user/keys/${ownKey.id}`)).expect(401);
      await t.http
        .get(t.api(`/user/keys/${ownKey.id}`))
        .set(withToken(owner.token))
        .expect(200);
      await t.http
        .delete(t.api(`/user/keys/${ownKey.id}`))
        .set(withToken(admin.token))
        .expect(204);
      await t.http
        .get(t.api(`/user/keys/${ownKey.id}`))
        .set(withToken(owner.token))
        .expect(404);
      await t.http
        .delete(t.api(`/user/keys/${ownKey.id}`))
        .set(withToken(owner.token))
        .expect(404);
      const again = await post(owner, { title: uniqueName('again'), key: keys.ecdsa256.line }).expect(201);
      await t.http
        .delete(t.api(`/user/keys/${again.body.id}`))
        .set(withToken(owner.token))
        .expect(204);
    });
  });

  describe('paging', () => {
    it('pages in SQL with X-Total-Count and Link', async () => {
      const pager = await makeUser(t);
      for (const key of [keys.spare1, keys.spare2, keys.spare3]) await post(pager, { title: uniqueName('page'), key: key.line }).expect(201);
      const first = await t.http.get(t.api('/user/keys')).query({ limit: 2 }).set(withToken(pager.token)).expect(200);
      expect(first.body).toHaveLength(2);
      expect(first.headers['x-total-count']).toBe('3');
      expect(first.headers.link).toBe(
        '<http://anvil.test/api/v1/user/keys?limit=2&page=2>; rel="next",<http://anvil.test/api/v1/user/keys?limit=2&page=2>; rel="last"',
      );
      const second = await t.http
        .get(t.api(`/users/${pager.name}/keys`))
        .query({ limit: 2, page: 2 })
        .set(withToken(owner.token))
        .expect(200);
      expect(second.body).toHaveLength(1);
      expect(second.body[0].fingerprint).toBe(keys.spare3.fingerprint);
      await t.http
        .delete(t.api(`/admin/users/${pager.name}`))
        .set(withToken(admin.token))
        .expect(204);
    });

    it('deleting a user deletes their keys (the fingerprints are free again)', async () => {
      const response = await post(owner, { title: uniqueName('after'), key: keys.spare1.line }).expect(201);
      await remove(owner, response.body.id).expect(204);
    });
  });

  describe('GET /{username}.keys', () => {
    let lister: TestUser;

    beforeAll(async () => {
      lister = await makeUser(t, { name: `dot.${uniqueName('lister')}` });
      await post(lister, { title: 'one', key: keys.ed25519.line }).expect(201);
      await post(lister, { title: 'two', key: keys.rsa3072.line }).expect(201);
    });

    it('lists authorized_keys lines, without comments, as text/plain, to anyone who may see the user', async () => {
      const response = await t.http.get(`/${lister.name}.keys`).expect(200);
      expect(response.headers['content-type']).toBe('text/plain;charset=utf-8');
      const strip = (line: string) => line.split(' ').slice(0, 2).join(' ');
      expect(response.text).toBe(`${strip(keys.ed25519.line)}\n${strip(keys.rsa3072.line)}\n`);
      expect((await t.http.get(`/${lister.name.toUpperCase()}.keys`).expect(200)).text).toBe(response.text);
    });

    it('is empty for a user without keys, and 404 for unknown or invisible users', async () => {
      const empty = await t.http.get(`/${other.name}.keys`).expect(200);
      expect(empty.text).toBe('');
      expect(empty.headers['content-type']).toBe('text/plain;charset=utf-8');
      const missing = await t.http.get(`/nobody-${uniqueName()}.keys`).expect(404);
      expect(missing.text).toBe('');
      const hidden = await makeUser(t, { visibility: 'private' });
      await t.http.get(`/${hidden.name}.keys`).expect(404);
      await t.http.get(`/${hidden.name}.keys`).set(withToken(other.token)).expect(404);
      await t.http.get(`/${hidden.name}.keys`).set(withToken(hidden.token)).expect(200);
      const limited = await makeUser(t, { visibility: 'limited' });
      await t.http.get(`/${limited.name}.keys`).expect(404);
      await t.http.get(`/${limited.name}.keys`).set(withToken(other.token)).expect(200);
    });

    it('is not served under /api/v1, and bad credentials still give 401', async () => {
      await t.http.get(t.api(`/${lister.name}.keys`)).expect(404);
      await t.http
        .get(`/${lister.name}.keys`)
        .set(withToken('0'.repeat(40)))
        .expect(401);
    });
  });
});

/** Concatenated SSH wire strings. */
function sshBlob(...values: (string | Buffer)[]): Buffer {
  return Buffer.concat(
    values.flatMap((value) => {
      const bytes = typeof value === 'string' ? Buffer.from(value) : value;
      const length = Buffer.alloc(4);
      length.writeUInt32BE(bytes.length);
      return [length, bytes];
    }),
  );
}

/** An uncompressed P-256 point (0x04 ‖ x ‖ y) of a fresh key. */
function p256Point(): Buffer {
  const jwk = generateKeyPairSync('ec', { namedCurve: 'P-256' }).publicKey.export({ format: 'jwk' });
  return Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, 'base64url'), Buffer.from(jwk.y!, 'base64url')]);
}
