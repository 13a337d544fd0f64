import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { Clock } from '../common/time';
import type { LfsConfig } from '../config/slices';
import { lfsJwtSecretFile, LfsTokens } from './lfs-tokens';

class FixedClock extends Clock {
  constructor(public now: number) {
    super();
  }
  override nowUnix(): number {
    return this.now;
  }
}

describe('LFS tokens', () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'anvil-lfs-tokens-'));
  const config: LfsConfig = { startServer: true, maxFileBytes: 0, maxBatchSize: 10, locksPagingNum: 10, httpAuthExpirySeconds: 600, jwtSecret: null };
  afterAll(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  it('verifies its own tokens until they expire, and nothing altered or signed by another key', () => {
    const clock = new FixedClock(1_000_000);
    const tokens = new LfsTokens(config, { dataDir, secretKey: null }, clock);
    const { token, expiresIn } = tokens.issue({ userId: 7, repositoryId: 42, operation: 'upload' });
    expect(expiresIn).toBe(600);
    expect(tokens.verify(token)).toEqual({ userId: 7, repositoryId: 42, operation: 'upload' });
    // The key was generated once into DATA_DIR, private to its owner, and a second instance reads the same.
    expect(fs.statSync(lfsJwtSecretFile(dataDir)).mode & 0o777).toBe(0o600);
    expect(new LfsTokens(config, { dataDir, secretKey: null }, clock).verify(token)).not.toBeNull();
    const [header, payload, signature] = token.split('.');
    const forged = Buffer.from(JSON.stringify({ RepoID: 43, Op: 'upload', UserID: 7, exp: 2_000_000 })).toString('base64url');
    expect(tokens.verify(`${header}.${forged}.${signature}`)).toBeNull();
    const none = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    expect(tokens.verify(`${none}.${payload}.`)).toBeNull();
    expect(new LfsTokens({ ...config, jwtSecret: 'another key' }, { dataDir, secretKey: null }, clock).verify(token)).toBeNull();
    clock.now += 600;
    expect(tokens.verify(token)).toBeNull();
  });
});
