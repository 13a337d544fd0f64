import { Injectable } from '@nestjs/common';
import type { Viewer } from '../auth/auth-context';
import { PayloadTooLargeError, TooManyRequestsError } from '../common/errors';
import { MarkdownConfig, SiteConfig } from '../config/slices';
import { Visibility } from '../users/user.entity';
import { UserVisibility } from '../users/user-visibility';
import { RenderOutputTooLarge } from './render-pool';
import { MarkdownRenderer } from './markdown-renderer';
import { contextBase, MarkdownRequest, mentionCandidates, renderMode } from './markdown.option';
import { MentionStore } from './mention.store';

/** Distinct names looked up per document; later ones are left as plain text. */
const MAX_MENTION_LOOKUPS = 1000;

@Injectable()
export class MarkdownService {
  constructor(
    private readonly markdownConfig: MarkdownConfig,
    private readonly siteConfig: SiteConfig,
    private readonly renderer: MarkdownRenderer,
    private readonly mentionStore: MentionStore,
    private readonly visibility: UserVisibility,
  ) {}

  /** Renders in progress per user: MARKDOWN_RENDERS_PER_USER at a time, so one user never holds every worker. */
  private readonly inProgress = new Map<number, number>();

  /** POST /markdown: the mode decides whether mentions, wiki and relative links are processed. */
  async render(viewer: Viewer, request: MarkdownRequest): Promise<string> {
    this.assertSize(Buffer.byteLength(request.text, 'utf8'));
    if (request.text === '') return '';
    const mode = renderMode(request.mode);
    const special = mode !== 'markdown';
    const mentions = special ? await this.mentionable(viewer, request.text) : [];
    return this.oneAtATime(viewer, () =>
      this.renderer.render(request.text, {
        special,
        comment: mode === 'comment',
        wiki: special && request.wiki,
        base: contextBase(special ? request.context : '', this.siteConfig.rootUrl),
        rootUrl: this.siteConfig.rootUrl,
        mentions,
        // A document (gfm) has no repository for `#N` to point into, unless it is a wiki page.
        issueRefs: mode === 'comment' || (mode === 'gfm' && request.wiki) ? 'all' : mode === 'gfm' ? 'cross' : 'none',
      }),
    );
  }

  /** POST /markdown/raw: the body is the document, rendered in markdown mode. */
  async renderRaw(viewer: Viewer, raw: Buffer): Promise<string> {
    this.assertSize(raw.length);
    if (raw.length === 0) return '';
    return this.oneAtATime(viewer, () =>
      this.renderer.render(raw.toString('utf8'), {
        special: false,
        comment: false,
        wiki: false,
        base: this.siteConfig.rootUrl,
        rootUrl: this.siteConfig.rootUrl,
        mentions: [],
        issueRefs: 'none',
      }),
    );
  }

  private async oneAtATime(viewer: Viewer, render: () => Promise<string>): Promise<string> {
    const key = viewer.user?.id ?? 0;
    const running = this.inProgress.get(key) ?? 0;
    if (running >= this.markdownConfig.rendersPerUser) {
      throw new TooManyRequestsError('a markdown render of yours is still running, try again when it ends', 1);
    }
    this.inProgress.set(key, running + 1);
    try {
      return await render();
    } catch (error) {
      if (error instanceof RenderOutputTooLarge) {
        throw new PayloadTooLargeError(`rendered document is too large: over ${this.markdownConfig.maxOutputBytes} bytes`);
      }
      throw error;
    } finally {
      const left = (this.inProgress.get(key) ?? 1) - 1;
      if (left <= 0) this.inProgress.delete(key);
      else this.inProgress.set(key, left);
    }
  }

  private assertSize(bytes: number): void {
    const max = this.markdownConfig.maxBytes;
    if (bytes > max) throw new PayloadTooLargeError(`markdown document is too large: ${bytes} bytes, the limit is ${max} bytes`);
  }

  /**
   * Existing users the caller may see, by lower-cased name. A user the caller may not see is not linked,
   * so that rendering does not reveal who exists (docs/visibility.md).
   */
  private async mentionable(viewer: Viewer, text: string): Promise<[string, string][]> {
    const names = mentionCandidates(text, MAX_MENTION_LOOKUPS);
    if (names.length === 0) return [];
    const mentions: [string, string][] = [];
    for (const user of await this.mentionStore.findByLowerNames(names)) {
      // A public-only token links only the users GET /users/{u} would show it.
      const tokenMaySee = !viewer.publicOnly || user.visibility === Visibility.Public || viewer.is(user.id);
      if (tokenMaySee && (await this.visibility.canSee(viewer, user))) mentions.push([user.lowerName, user.name]);
    }
    return mentions;
  }
}
