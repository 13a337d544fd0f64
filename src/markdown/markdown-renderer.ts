import { Injectable, OnModuleDestroy } from '@nestjs/common';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { RenderPool } from './render-pool';

/** What the worker needs to render one document (see render.worker.mjs). */
export interface RenderOptions {
  /** gfm or comment mode: mentions, wiki links and relative links are processed. */
  special: boolean;
  /** comment mode: single newlines become `<br>`. */
  comment: boolean;
  wiki: boolean;
  /** Base of relative links (absolute http(s) URL). */
  base: string;
  rootUrl: string;
  /** Mentionable users: [lower-cased name, stored name]. */
  mentions: [string, string][];
}

const WORKER_FILE = 'render.worker.mjs';

/**
 * The worker script, beside this module: in src/ under ts-jest, and in dist/src/markdown, where
 * `npm run build` copies it (tsc does not copy .mjs files). A build made by tsc alone falls back to the
 * project's src/markdown.
 */
export function workerFile(directory = __dirname): string {
  const candidates = [path.join(directory, WORKER_FILE), path.resolve(directory, '..', '..', '..', 'src', 'markdown', WORKER_FILE)];
  const found = candidates.find((candidate) => fs.existsSync(candidate));
  if (!found) throw new Error(`markdown worker not found; looked for ${candidates.join(', ')}`);
  return found;
}

/**
 * A render's time budget grows with the document: micromark needs up to about 50 µs per byte on a busy
 * machine (a 1 MiB document: tens of seconds), while a small document that takes long is pathological
 * (nested emphasis is quadratic) and is stopped early.
 */
export function renderBudgetMs(bytes: number): number {
  return 5_000 + Math.ceil(bytes * 0.06);
}

/**
 * Renders off the main thread. One or two workers: a 1 MiB document needs several hundred MB of heap and
 * a core for its whole render, so more would starve the server rather than help it.
 */
@Injectable()
export class MarkdownRenderer implements OnModuleDestroy {
  private readonly pool = new RenderPool({
    workerFile: workerFile(),
    size: Math.min(2, Math.max(1, os.availableParallelism() - 1)),
    timeoutMs: renderBudgetMs(0),
    queueTimeoutMs: 120_000,
    maxQueued: 64,
    resourceLimits: { maxOldGenerationSizeMb: 1024, maxYoungGenerationSizeMb: 64 },
  });

  render(text: string, options: RenderOptions): Promise<string> {
    return this.pool.render(text, options, renderBudgetMs(Buffer.byteLength(text, 'utf8')));
  }

  stats(): { workers: number; busy: number; queued: number } {
    return this.pool.stats();
  }

  onModuleDestroy(): Promise<void> {
    return this.pool.close();
  }
}
