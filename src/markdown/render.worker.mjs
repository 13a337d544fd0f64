// The Markdown pipeline, run inside a worker thread so that a large or hostile document never
// blocks the server. Plain JavaScript ESM on purpose: remark and rehype are ESM-only, and this file is loaded
// by node:worker_threads directly, both from src/ (tests) and from dist/ (see workerFile() in markdown-renderer.ts).
//
// Once loaded it says { ready: true, threadId } (its Linux thread id, so the pool can budget jobs in CPU time); then
// message in:  { id, text, options: { special, comment, wiki, base, rootUrl, mentions: [[lowerName, name]], issueRefs } }
// message out: { id, html } or { id, error }
import { readlinkSync } from 'node:fs';
import { posix } from 'node:path';
import { parentPort } from 'node:worker_threads';
import GithubSlugger from 'github-slugger';
import { toString } from 'hast-util-to-string';
import { findAndReplace } from 'mdast-util-find-and-replace';
import rehypeRaw from 'rehype-raw';
import rehypeSanitize, { defaultSchema } from 'rehype-sanitize';
import rehypeStringify from 'rehype-stringify';
import remarkGfm from 'remark-gfm';
import remarkParse from 'remark-parse';
import remarkRehype from 'remark-rehype';
import { unified } from 'unified';

const CLOBBER_PREFIX = 'user-content-';
const CLOBBERED = ['id', 'name', 'ariaDescribedBy', 'ariaLabelledBy'];

// GitHub's sanitation rules (hast-util-sanitize's default schema), plus the mention class, and with the
// elements whose content must go too (not only their tags). Ids are prefixed by clobberIds() instead of
// the sanitizer, which would prefix the footnote ids remark-rehype has already prefixed a second time.
const SCHEMA = {
  ...defaultSchema,
  clobber: [],
  // srcset is a URL list too; the default schema leaves it unchecked.
  protocols: { ...defaultSchema.protocols, srcSet: ['http', 'https'] },
  attributes: {
    ...defaultSchema.attributes,
    // `mention` is not among the classes an author may write: rehypeMentionClass gives it, after sanitising,
    // to the links remarkMentions made, so that raw HTML cannot dress a link to anywhere as a mention.
    a: [...defaultSchema.attributes.a.filter((rule) => !Array.isArray(rule) || rule[0] !== 'className'), ['className', 'data-footnote-backref']],
  },
  strip: [
    'script',
    'style',
    'iframe',
    'frame',
    'frameset',
    'object',
    'embed',
    'applet',
    'noscript',
    'noembed',
    'noframes',
    'template',
    'xmp',
    'title',
    'textarea',
    'select',
    'svg',
    'math',
  ],
};

const IMAGE_EXTENSIONS = /\.(?:apng|avif|bmp|gif|ico|jpe?g|png|svg|webp)$/i;
// `@name` after the start of a text, whitespace or an opening bracket, ending before punctuation or
// whitespace; a name never ends with a dot (Forgejo's mention rule).
const MENTION = /(?<=^|[\s([{])@([A-Za-z0-9_](?:[A-Za-z0-9_.-]*[A-Za-z0-9_-])?)(?=$|[\s.,:;!?)\]}'"])/g;
const WIKI_LINK = /\[\[([^\]|\n]+?)(?:\|([^\]|\n]+?))?\]\]/g;
const SCHEME = /^[A-Za-z][A-Za-z0-9+.-]*:/;

/** [[Page]], [[Label|Page]] and [[images/x.png]], when the request asks for wiki links. */
function remarkWikiLinks() {
  return (tree, file) => {
    const options = file.data.render;
    if (!options.special || !options.wiki) return;
    findAndReplace(
      tree,
      [
        WIKI_LINK,
        (_whole, first, second) => {
          const label = first.trim();
          const page = (second === undefined ? first : second).trim();
          if (page === '') return false;
          if (IMAGE_EXTENSIONS.test(page)) {
            return { type: 'image', url: joinPath(options.base, `wiki/raw/${encodePath(page)}`), alt: label, title: null };
          }
          const url = joinPath(options.base, `wiki/${encodePath(page.replace(/ /g, '-'))}`);
          return { type: 'link', url, title: null, children: [{ type: 'text', value: label }] };
        },
      ],
      { ignore: ['link', 'linkReference'] },
    );
  };
}

/** `@user` of an existing user (the service looked them up) → a mention link. */
function remarkMentions() {
  return (tree, file) => {
    const options = file.data.render;
    if (!options.special) return;
    const mentions = new Map(options.mentions);
    findAndReplace(
      tree,
      [
        MENTION,
        (whole, name) => {
          const stored = mentions.get(name.toLowerCase());
          if (stored === undefined) return false;
          return {
            type: 'link',
            url: options.rootUrl + encodeURIComponent(stored),
            title: null,
            children: [{ type: 'text', value: whole }],
            data: { hProperties: { className: ['mention'] } },
          };
        },
      ],
      { ignore: ['link', 'linkReference'] },
    );
  };
}

/**
 * The mention class, on exactly the links remarkMentions makes: `@name` text linking to ROOT_URL + name of a
 * user the service found mentionable. Anything else that claims to be a mention lost the class when sanitised.
 */
function rehypeMentionClass() {
  return (tree, file) => {
    const options = file.data.render;
    if (!options.special || options.mentions.length === 0) return;
    const byHref = new Map(options.mentions.map(([lower, stored]) => [options.rootUrl + encodeURIComponent(stored), lower]));
    eachElement(tree, (node) => {
      if (node.tagName !== 'a' || typeof node.properties.href !== 'string') return;
      const lower = byHref.get(node.properties.href);
      const text = node.children.length === 1 && node.children[0].type === 'text' ? node.children[0].value : undefined;
      if (lower !== undefined && text !== undefined && text.toLowerCase() === `@${lower}`) {
        node.properties.className = [...(node.properties.className ?? []), 'mention'];
      }
    });
  };
}

// Issue references, as the server reads them in commit messages (src/issues/issue-references.ts): `#N` or `!N`
// after the start, whitespace, a bracket or a quote; `owner/repo#N` after the start, whitespace or a bracket; both
// ending before whitespace, a closing bracket, the end, or punctuation followed by one of those. `\s` is ASCII here.
const ISSUE_NUMERIC = /(?:[\t\n\f\r ]|^|\(|\[|'|")([#!][0-9]+)(?:[\t\n\f\r ]|$|\)|\]|'|"|[:;,.?!][\t\n\f\r ]|[:;,.?!]$)/d;
const ISSUE_CROSS = /(?:[\t\n\f\r ]|^|\(|\[)([0-9a-zA-Z_.-]+\/[0-9a-zA-Z_.-]+[#!][0-9]+)(?:[\t\n\f\r ]|$|\)|\]|[:;,.?!][\t\n\f\r ]|[:;,.?!]$)/d;
const VALID_NAME = /^[a-z0-9_.-]+$/;
const CLOSE_KEYWORD = /(?:[\t\n\f\r ]|^|\(|\[)(close|closes|closed|fix|fixes|fixed|resolve|resolves|resolved):? $/di;
const REOPEN_KEYWORD = /(?:[\t\n\f\r ]|^|\(|\[)(reopen|reopens|reopened):? $/di;
const MAX_ISSUE_INDEX = 2n ** 63n - 1n;

/** The first reference of `text` (a cross-repository one only, with `crossOnly`), with a keyword before it. */
function firstIssueReference(text, crossOnly) {
  const match = (!crossOnly && ISSUE_NUMERIC.exec(text)) || ISSUE_CROSS.exec(text);
  if (!match) return undefined;
  const [start, end] = match.indices[1];
  const reference = match[1];
  const separator = reference.search(/[#!]/);
  const index = reference.slice(separator + 1);
  if (BigInt(index) > MAX_ISSUE_INDEX) return undefined;
  const repo = reference.slice(0, separator);
  let owner = '';
  let name = '';
  if (repo !== '') {
    const parts = repo.toLowerCase().split('/');
    if (parts.length !== 2 || !VALID_NAME.test(parts[0]) || !VALID_NAME.test(parts[1])) return undefined;
    [owner, name] = parts;
  }
  const before = text.slice(0, start);
  const keyword = CLOSE_KEYWORD.exec(before) ?? REOPEN_KEYWORD.exec(before);
  return { start, end, owner, name, index, isPull: reference[separator] === '!', keyword: keyword ? keyword.indices[1] : undefined };
}

/** ROOT_URL joined with path elements, empty ones dropped, as a path is cleaned (`..` climbs). */
function joinUnderRoot(rootUrl, ...elements) {
  return new URL(posix.join(...elements.filter((element) => element !== '')), rootUrl.endsWith('/') ? rootUrl : `${rootUrl}/`).href;
}

/**
 * `#N`, `!N` and `owner/repo#N` → links of class `ref-issue` to the issue (or pull) page, a closing or reopening
 * keyword just before one in a `issue-keyword` span, as Forgejo renders them: comment mode links both kinds, gfm
 * mode only references to another repository (a `#N` has no repository to point into), except for wiki pages.
 * `#N` without a repository points at ROOT_URL/issues/N, as Forgejo's does for a document rendered without one.
 * Runs after sanitising, on text outside links and code, so that only these links carry the classes.
 */
function rehypeIssueReferences() {
  return (tree, file) => {
    const options = file.data.render;
    if (!options.special || options.issueRefs === 'none' || options.issueRefs === undefined) return;
    const crossOnly = options.issueRefs === 'cross';
    const stack = [tree];
    while (stack.length > 0) {
      const node = stack.pop();
      if (!node.children) continue;
      if (node.type === 'element' && (node.tagName === 'a' || node.tagName === 'code' || node.tagName === 'pre')) continue;
      const children = [];
      for (const child of node.children) {
        if (child.type === 'text') children.push(...linkReferences(child.value, crossOnly, options.rootUrl));
        else {
          children.push(child);
          stack.push(child);
        }
      }
      node.children = children;
    }
  };
}

function linkReferences(value, crossOnly, rootUrl) {
  const nodes = [];
  const text = (part) => {
    if (part !== '') nodes.push({ type: 'text', value: part });
  };
  let rest = value;
  for (let reference = firstIssueReference(rest, crossOnly); reference !== undefined; reference = firstIssueReference(rest, crossOnly)) {
    const href = joinUnderRoot(rootUrl, reference.owner, reference.name, reference.isPull ? 'pulls' : 'issues', reference.index);
    const link = {
      type: 'element',
      tagName: 'a',
      properties: { href, className: ['ref-issue'] },
      children: [{ type: 'text', value: rest.slice(reference.start, reference.end) }],
    };
    if (reference.keyword) {
      const [from, to] = reference.keyword;
      text(rest.slice(0, from));
      nodes.push({ type: 'element', tagName: 'span', properties: { className: ['issue-keyword'] }, children: [{ type: 'text', value: rest.slice(from, to) }] });
      text(rest.slice(to, reference.start));
    } else text(rest.slice(0, reference.start));
    nodes.push(link);
    rest = rest.slice(reference.end);
  }
  text(rest);
  return nodes;
}

/** Comment mode: a single newline inside a paragraph is a hard break. */
function remarkBreaks() {
  return (tree, file) => {
    if (!file.data.render.comment) return;
    findAndReplace(tree, [/\r?\n|\r/g, () => ({ type: 'break' })]);
  };
}

/** Relative link and image targets resolved against the request's Context (gfm and comment modes). */
function rehypeResolveLinks() {
  return (tree, file) => {
    const options = file.data.render;
    if (!options.special) return;
    eachElement(tree, (node) => {
      const key = node.tagName === 'a' ? 'href' : node.tagName === 'img' ? 'src' : undefined;
      if (!key || typeof node.properties[key] !== 'string') return;
      const resolved = resolveRelative(node.properties[key], options.base);
      if (resolved !== undefined) node.properties[key] = resolved;
    });
  };
}

/**
 * GitHub-style heading anchors: `user-content-<slug>`, unique within the document. Runs after sanitising,
 * so that the slug is made of the text a reader sees.
 */
function rehypeHeadingIds() {
  return (tree) => {
    const slugger = new GithubSlugger();
    eachElement(tree, (node) => {
      if (!/^h[1-6]$/.test(node.tagName) || node.properties.id !== undefined) return;
      const slug = slugger.slug(toString(node).trim());
      if (slug !== '') node.properties.id = CLOBBER_PREFIX + slug;
    });
  };
}

/** Keeps author-chosen ids and names out of the page's own namespace (GitHub's `user-content-` prefix). */
function rehypeClobberIds() {
  const prefix = (value) => (String(value).startsWith(CLOBBER_PREFIX) ? String(value) : CLOBBER_PREFIX + String(value));
  return (tree) => {
    eachElement(tree, (node) => {
      for (const key of CLOBBERED) {
        const value = node.properties[key];
        if (value === undefined || value === null || value === '') continue;
        node.properties[key] = Array.isArray(value) ? value.map(prefix) : prefix(value);
      }
    });
  };
}

/**
 * Links that leave the site carry rel="nofollow"; links into ROOT_URL (mentions, resolved relative links)
 * do not. Runs after sanitising, which drops any rel the author wrote.
 */
function rehypeNofollow() {
  return (tree, file) => {
    const rootUrl = file.data.render.rootUrl;
    eachElement(tree, (node) => {
      if (node.tagName !== 'a' || typeof node.properties.href !== 'string') return;
      const href = node.properties.href.trim();
      if (/^(?:https?:)?\/\//i.test(href) && !isUnder(href, rootUrl)) node.properties.rel = ['nofollow'];
    });
  };
}

function isUnder(href, rootUrl) {
  try {
    const url = new URL(href, rootUrl);
    const root = new URL(rootUrl);
    return url.origin === root.origin && url.pathname.startsWith(root.pathname);
  } catch {
    return false;
  }
}

/** Raw HTML is re-parsed (parse5) only when the document has any: parsing is the costly part. */
function rehypeRawWhenPresent() {
  const reparse = rehypeRaw();
  return (tree, file) => {
    return hasRaw(tree) ? reparse(tree, file) : undefined;
  };
}

/** Calls `visitor` on every element, without recursion: nesting depth is the author's to choose. */
function eachElement(tree, visitor) {
  const stack = [tree];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node.type === 'element') visitor(node);
    if (node.children) for (let index = node.children.length - 1; index >= 0; index--) stack.push(node.children[index]);
  }
}

function hasRaw(tree) {
  const stack = [tree];
  while (stack.length > 0) {
    const node = stack.pop();
    if (node.type === 'raw') return true;
    if (node.children) for (const child of node.children) stack.push(child);
  }
  return false;
}

function joinPath(base, relative) {
  return base.endsWith('/') ? base + relative : `${base}/${relative}`;
}

function encodePath(page) {
  return page
    .split('/')
    .map((segment) => encodeURIComponent(segment))
    .join('/');
}

/** A relative URL resolved against `base` (a directory); undefined for absolute URLs and fragments. */
function resolveRelative(value, base) {
  const url = value.trim();
  if (url === '' || url.startsWith('#') || url.startsWith('//') || SCHEME.test(url)) return undefined;
  try {
    const resolved = new URL(url, base.endsWith('/') ? base : `${base}/`);
    return resolved.protocol === 'http:' || resolved.protocol === 'https:' ? resolved.href : undefined;
  } catch {
    return undefined;
  }
}

const processor = unified()
  .use(remarkParse)
  .use(remarkGfm)
  .use(remarkWikiLinks)
  .use(remarkMentions)
  .use(remarkBreaks)
  .use(remarkRehype, { allowDangerousHtml: true })
  .use(rehypeRawWhenPresent)
  .use(rehypeResolveLinks)
  .use(rehypeClobberIds)
  .use(rehypeSanitize, SCHEMA)
  .use(rehypeMentionClass)
  .use(rehypeIssueReferences)
  .use(rehypeHeadingIds)
  .use(rehypeNofollow)
  .use(rehypeStringify)
  .freeze();

export function render(text, options) {
  return String(processor.processSync({ value: text, data: { render: options } }));
}

parentPort?.on('message', (message) => {
  try {
    const html = render(message.text, message.options);
    // Reference links and footnotes can multiply a document a thousandfold: the output is capped here,
    // before it is copied to the main thread.
    if (message.maxOutputLength !== undefined && html.length > message.maxOutputLength) {
      parentPort.postMessage({ id: message.id, error: 'OUTPUT_TOO_LARGE' });
      return;
    }
    parentPort.postMessage({ id: message.id, html });
  } catch (error) {
    parentPort.postMessage({ id: message.id, error: error instanceof Error ? error.message : String(error) });
  }
});
/** This thread's id as /proc knows it; undefined off Linux (the pool then budgets in wall-clock time). */
function ownThreadId() {
  try {
    const id = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(id) ? id : undefined;
  } catch {
    return undefined;
  }
}
parentPort?.postMessage({ ready: true, threadId: ownThreadId() });
