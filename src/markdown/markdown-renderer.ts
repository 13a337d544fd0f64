import { Injectable, OnModuleDestroy } from '@nestjs/common';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { MarkdownConfig } from '../config/slices';
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
  /** Which issue references become links: none (markdown mode), `owner/repo#N` only (gfm), or `#N` too. */
  issueRefs: 'none' | 'cross' | 'all';
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
 * Renders off the main thread, each document within one flat time budget (MARKDOWN_RENDER_BUDGET) and
 * output cap (MARKDOWN_MAX_OUTPUT_SIZE). Two to four workers: with one render per user at a time
 * (MarkdownService), one user's pathological document never holds every worker, and more would starve the
 * server of cores rather than help (a large document needs hundreds of MB of heap and a core).
 */
@Injectable()
export class MarkdownRenderer implements OnModuleDestroy {
  private readonly pool: RenderPool;

  constructor(private readonly markdownConfig: MarkdownConfig) {
    this.pool = new RenderPool({
      workerFile: workerFile(),
      size: Math.min(4, Math.max(2, os.availableParallelism() - 1)),
      timeoutMs: markdownConfig.renderBudgetMs,
      queueTimeoutMs: 120_000,
      maxQueued: 64,
      resourceLimits: { maxOldGenerationSizeMb: 1024, maxYoungGenerationSizeMb: 64 },
    });
  }

  render(text: string, options: RenderOptions): Promise<string> {
    return this.pool.render(text, options, this.markdownConfig.renderBudgetMs, this.markdownConfig.maxOutputBytes);
  }

  stats(): { workers: number; busy: number; queued: number } {
    return this.pool.stats();
  }

  onModuleDestroy(): Promise<void> {
    return this.pool.close();
  }
}
