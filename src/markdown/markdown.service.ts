import { Inject, Injectable } from '@nestjs/common';
import type { Viewer } from '../auth/auth-context';
import { PayloadTooLargeError } from '../common/errors';
import { APP_CONFIG, AppConfig } from '../config/config';
import { UserVisibility } from '../users/user-visibility';
import { MarkdownRenderer } from './markdown-renderer';
import { contextBase, MarkdownRequest, mentionCandidates, renderMode } from './markdown.option';
import { MentionStore } from './mention.store';

/** Distinct names looked up per document; later ones are left as plain text. */
const MAX_MENTION_LOOKUPS = 1000;

@Injectable()
export class MarkdownService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly renderer: MarkdownRenderer,
    private readonly mentionStore: MentionStore,
    private readonly visibility: UserVisibility,
  ) {}

  /** POST /markdown: the mode decides whether mentions, wiki and relative links are processed. */
  async render(viewer: Viewer, request: MarkdownRequest): Promise<string> {
    this.assertSize(Buffer.byteLength(request.text, 'utf8'));
    if (request.text === '') return '';
    const mode = renderMode(request.mode);
    const special = mode !== 'markdown';
    return this.renderer.render(request.text, {
      special,
      comment: mode === 'comment',
      wiki: special && request.wiki,
      base: contextBase(special ? request.context : '', this.config.rootUrl),
      rootUrl: this.config.rootUrl,
      mentions: special ? await this.mentionable(viewer, request.text) : [],
    });
  }

  /** POST /markdown/raw: the body is the document, rendered in markdown mode. */
  async renderRaw(raw: Buffer): Promise<string> {
    this.assertSize(raw.length);
    if (raw.length === 0) return '';
    return this.renderer.render(raw.toString('utf8'), {
      special: false,
      comment: false,
      wiki: false,
      base: this.config.rootUrl,
      rootUrl: this.config.rootUrl,
      mentions: [],
    });
  }

  private assertSize(bytes: number): void {
    const max = this.config.markdown.maxBytes;
    if (bytes > max) throw new PayloadTooLargeError(`markdown document is too large: ${bytes} bytes, the limit is ${max} bytes`);
  }

  /**
   * Existing users the caller may see, by lower-cased name. A user the caller may not see is not linked,
   * so that rendering does not reveal who exists (behaviour 1.10).
   */
  private async mentionable(viewer: Viewer, text: string): Promise<[string, string][]> {
    const names = mentionCandidates(text, MAX_MENTION_LOOKUPS);
    if (names.length === 0) return [];
    const mentions: [string, string][] = [];
    for (const user of await this.mentionStore.findByLowerNames(names)) {
      if (await this.visibility.canSee(viewer, user)) mentions.push([user.lowerName, user.name]);
    }
    return mentions;
  }
}
