import { ApiProperty, ApiSchema } from '@nestjs/swagger';
import { DecodedBody } from '../http/body-decoding';
import { InvalidInputError } from '../common/errors';
import { fieldFailure, FieldSpec } from '../common/fields';

/**
 * The body of POST /markdown. Documented here; read by readMarkdownOption, not by the global
 * body pipe, because its keys match case-insensitively (`text` and `Text` both work).
 */
@ApiSchema({ name: 'MarkdownOption' })
export class MarkdownOption {
  @ApiProperty({ required: false, description: 'Text to render' })
  Text?: string;

  @ApiProperty({ required: false, description: 'Mode to render (markdown, gfm, comment); anything else means markdown' })
  Mode?: string;

  @ApiProperty({ required: false, description: 'Context to render: the base of relative links (a URL, or a path under ROOT_URL)' })
  Context?: string;

  @ApiProperty({ required: false, description: 'Is it a wiki page? Enables [[Page]] links' })
  Wiki?: boolean;
}

export interface MarkdownRequest {
  text: string;
  mode: string;
  context: string;
  wiki: boolean;
}

const FIELDS: Record<string, FieldSpec> = {
  text: { field: 'Text', type: 'string' },
  mode: { field: 'Mode', type: 'string' },
  context: { field: 'Context', type: 'string' },
  wiki: { field: 'Wiki', type: 'boolean' },
};

/**
 * Reads a decoded /markdown body: keys case-insensitively (a later key wins, as Go's JSON decoder does),
 * null as absent, form fields as their last value. A field of the wrong type is a 422 naming it.
 */
export function readMarkdownOption(body: DecodedBody): MarkdownRequest {
  if (body.error) throw body.error;
  const values: Record<string, unknown> = {};
  for (const [key, raw] of Object.entries(body.value)) {
    const name = key.toLowerCase();
    if (!Object.hasOwn(FIELDS, name)) continue;
    const value = body.fromForm ? fromForm(name, raw as string[]) : raw;
    const failure = fieldFailure(FIELDS[name], value);
    if (failure) throw new InvalidInputError(failure);
    if (value !== null && value !== undefined) values[name] = value;
  }
  return {
    text: (values.text as string | undefined) ?? '',
    mode: (values.mode as string | undefined) ?? '',
    context: (values.context as string | undefined) ?? '',
    wiki: (values.wiki as boolean | undefined) ?? false,
  };
}

function fromForm(name: string, values: string[]): unknown {
  const last = values[values.length - 1];
  if (name !== 'wiki') return last;
  const lower = last.toLowerCase();
  if (['true', '1', 'on', 'yes'].includes(lower)) return true;
  if (['false', '0', 'off', 'no', ''].includes(lower)) return false;
  return last;
}

export type RenderMode = 'markdown' | 'gfm' | 'comment';

/** `gfm` and `comment` are special; any other mode, empty and unknown included, is plain `markdown`. */
export function renderMode(mode: string): RenderMode {
  return mode === 'gfm' || mode === 'comment' ? mode : 'markdown';
}

/**
 * The base of relative links: an absolute http(s) Context as it is; anything else is a path joined onto
 * ROOT_URL (`owner/repo` → `{ROOT_URL}owner/repo`), never a URL of another scheme.
 */
export function contextBase(context: string, rootUrl: string): string {
  const trimmed = context.trim();
  if (/^https?:\/\//i.test(trimmed)) {
    try {
      const url = new URL(trimmed);
      if (url.protocol === 'http:' || url.protocol === 'https:') {
        url.search = '';
        url.hash = '';
        return url.href;
      }
    } catch {
      // Not a URL after all: treated as a path below.
    }
  }
  const path = trimmed.replace(/^\/+/, '');
  const joined = new URL(rootUrl);
  joined.pathname = joined.pathname + path;
  return joined.href;
}

// A superset of the worker's mention rule: `@name` not preceded by a name character. Names are at most 40
// characters (Forgejo's limit), so longer matches are not looked up.
const MENTION_CANDIDATE = /(?<![A-Za-z0-9_])@([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)/g;
const MAX_NAME_LENGTH = 40;

/** Distinct lower-cased names that may be mentions, in document order, at most `limit` of them. */
export function mentionCandidates(text: string, limit: number): string[] {
  const names = new Set<string>();
  for (const match of text.matchAll(MENTION_CANDIDATE)) {
    if (names.size >= limit) break;
    if (match[1].length <= MAX_NAME_LENGTH) names.add(match[1].toLowerCase());
  }
  return [...names];
}
