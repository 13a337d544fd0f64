// The Markdown pipeline, run inside a worker thread so that a large or hostile document never
// blocks the server. Plain JavaScript ESM on purpose: remark and rehype are ESM-only, and this file is loaded
// by node:worker_threads directly, both from src/ (tests) and from dist/ (see workerFile() in markdown-renderer.ts).
//
// Once loaded it says { ready: true, threadId } (its Linux thread id, so the pool can budget jobs in CPU time); then
// message in:  { id, text, options: { special, comment, wiki, base, rootUrl, mentions: [[lowerName, name]] } }
// message out: { id, html } or { id, error }
import { readlinkSync } from 'node:fs';
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
  strip: ['script', 'style', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'noscript', 'noembed', 'noframes', 'template', 'xmp', 'title', 'textarea', 'select', 'svg', 'math'],
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
