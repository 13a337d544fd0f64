interface LanguageInfo {
  type?: string;
  extensions?: string[];
  filenames?: string[];
}

/**
 * Extensions several languages claim, settled for the common case (the classifiers of Linguist read the
 * content; Anvil counts by name only).
 */
const PREFERRED: Record<string, string> = {
  '.h': 'C',
  '.m': 'Objective-C',
  '.md': 'Markdown',
  '.rs': 'Rust',
  '.pl': 'Perl',
  '.cs': 'C#',
  '.php': 'PHP',
  '.sql': 'SQL',
  '.ts': 'TypeScript',
  '.tsx': 'TSX',
  '.txt': 'Text',
};

/** Only code and markup count, as Forgejo counts them; data (JSON, YAML) and prose (Markdown, text) do not. */
const COUNTED_TYPES = new Set(['programming', 'markup']);

/** Directories whose files are someone else's code, left out as Linguist's vendoring rules leave them out. */
const VENDORED_DIRECTORIES = new Set(['node_modules', 'vendor', 'third_party', 'bower_components', '.git']);

interface Tables {
  languages: Record<string, LanguageInfo>;
  byExtension: Map<string, string>;
  byFilename: Map<string, string>;
}

let built: Tables | undefined;
/** Linguist's table (a large module) is loaded and indexed when a repository's languages are first counted. */
function tables(): Tables {
  if (built) return built;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const languages = require('language-map') as Record<string, LanguageInfo>;
  const byExtension = new Map<string, string>();
  const byFilename = new Map<string, string>();
  for (const [name, info] of Object.entries(languages)) {
    for (const [index, extension] of (info.extensions ?? []).entries()) {
      const key = extension.toLowerCase();
      const current = byExtension.get(key);
      // A language whose first (primary) extension this is wins over one that merely lists it.
      if (current === undefined || (index === 0 && languages[current].extensions?.[0]?.toLowerCase() !== key)) byExtension.set(key, name);
    }
    for (const filename of info.filenames ?? []) if (!byFilename.has(filename)) byFilename.set(filename, name);
  }
  for (const [extension, name] of Object.entries(PREFERRED)) if (languages[name]) byExtension.set(extension, name);
  return (built = { languages, byExtension, byFilename });
}

/** The language a file counts for in the statistics, by its path; undefined when it is not counted. */
export function languageOf(path: string): string | undefined {
  const segments = path.split('/');
  if (segments.slice(0, -1).some((segment) => VENDORED_DIRECTORIES.has(segment))) return undefined;
  const { languages, byExtension, byFilename } = tables();
  const filename = segments[segments.length - 1];
  let name = byFilename.get(filename);
  if (name === undefined) {
    const dot = filename.lastIndexOf('.');
    if (dot <= 0) return undefined;
    name = byExtension.get(filename.slice(dot).toLowerCase());
  }
  return name !== undefined && COUNTED_TYPES.has(languages[name].type ?? '') ? name : undefined;
}

/** Bytes per language of a list of files. */
export function languageBytes(files: { path: string; size: number }[]): Map<string, number> {
  const totals = new Map<string, number>();
  for (const file of files) {
    const language = languageOf(file.path);
    if (language !== undefined) totals.set(language, (totals.get(language) ?? 0) + file.size);
  }
  return totals;
}
