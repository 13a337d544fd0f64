import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, OnModuleDestroy } from '@nestjs/common';
import { RenderFailure, RenderPool } from '../../markdown/render-pool';
import type { GpgEntity } from './gpg-key-facts';
import { GpgKeyParseError } from './gpg-key-facts';

export type { GpgEntity, GpgKeyFacts } from './gpg-key-facts';
export { GpgKeyParseError, MAX_ARMORED_KEY_LENGTH } from './gpg-key-facts';

/** What one upload holds, and which of its entities made the signature (when one was given). */
export interface InspectedKeyRing {
  entities: GpgEntity[];
  /** Primary key id of the entity whose key made a valid signature over one of the texts; null if none did. */
  signer?: string | null;
}

/**
 * Longest a key upload may keep the key worker busy. The size and algorithm policy (key-policy.ts) keeps
 * honest keys far below it; the budget bounds whatever the policy did not foresee.
 */
export const KEY_CHECK_BUDGET_MS = 5_000;

const WORKER_FILE = 'openpgp.worker.js';

function workerFile(directory = __dirname): string {
  const candidates = [path.join(directory, WORKER_FILE), path.resolve(directory, '..', '..', '..', 'src', 'keys', 'gpg', WORKER_FILE)];
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (!found) throw new Error(`key worker not found; looked for ${candidates.join(', ')}`);
  return found;
}

/**
 * OpenPGP work for the service, done in a worker thread (openpgp.worker.js) with a time budget per job:
 * parsing and verifying keys is CPU work on JavaScript BigInt, which on the main thread would hold up
 * every other request.
 */
@Injectable()
export class OpenPgpAdapter implements OnModuleDestroy {
  private readonly pool = new RenderPool({
    workerFile: workerFile(),
    size: 1,
    timeoutMs: KEY_CHECK_BUDGET_MS,
    queueTimeoutMs: 60_000,
    maxQueued: 32,
    resourceLimits: { maxOldGenerationSizeMb: 256 },
  });

  /** Reads the armored key ring and, when a signature is given, finds which entity made it over one of `texts`. */
  inspect(armored: string, signature?: { armored: string; texts: string[]; now: Date }): Promise<InspectedKeyRing> {
    return this.run<InspectedKeyRing>(armored, {
      op: 'inspect',
      signature: signature?.armored,
      texts: signature?.texts,
      nowMs: signature?.now.getTime(),
    });
  }

  /** One armored block of the stored entities, each limited to the subkeys still stored. */
  exportKeys(entities: { armored: string; subkeyIds: ReadonlySet<string> }[], comment?: string): Promise<string> {
    return this.run<string>('', { op: 'export', entities: entities.map((entity) => ({ armored: entity.armored, subkeyIds: [...entity.subkeyIds] })), comment });
  }

  onModuleDestroy(): Promise<void> {
    return this.pool.close();
  }

  private async run<T>(text: string, options: Record<string, unknown>): Promise<T> {
    let answer: string;
    try {
      answer = await this.pool.render(text, options);
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      const refusal = /PARSE:(.*)$/s.exec(message);
      if (refusal) throw new GpgKeyParseError(refusal[1]);
      if (error instanceof RenderFailure && /took longer than/.test(message)) throw new GpgKeyParseError('the key took too long to check');
      throw error;
    }
    return JSON.parse(answer) as T;
  }
}
