/**
 * The pure text work of a repository's first commit: README templating, the .gitignore
 * assembled from named templates, and the placeholders of a license filled in.
 */

export interface ReadmeValues {
  Name: string;
  Description: string;
  OwnerName: string;
  'CloneURL.HTTPS': string;
  'CloneURL.SSH': string;
}

/** `{Key}` becomes its value; an unknown key is left as written, as Forgejo's template expansion does. */
export function expandReadme(template: string, values: ReadmeValues): string {
  return template.replace(/\{([^{}]+)\}/g, (whole, key: string) =>
    Object.prototype.hasOwnProperty.call(values, key) ? values[key as keyof ReadmeValues] : whole,
  );
}

/** Each template preceded by `# ---> <name>` and followed by a blank line, as Forgejo writes .gitignore. */
export function assembleGitignore(templates: { name: string; content: string }[]): string {
  return templates.map((template) => `# ---> ${template.name}\n${template.content}\n`).join('');
}

export interface LicenseValues {
  owner: string;
  email: string;
  repository: string;
  year: string;
}

/**
 * The placeholders the SPDX license texts use for the copyright line and the "how to apply" notes. Only
 * spellings that are placeholders in every text they appear in are listed; a bare word such as YEAR is not
 * (0BSD, handled on its own, is the exception).
 */
const PLACEHOLDERS: Record<keyof LicenseValues, string[]> = {
  owner: [
    '<name of author>',
    '<owner>',
    '<OWNER>',
    '[NAME]',
    '[name of copyright owner]',
    '[name of copyright holder]',
    '<COPYRIGHT HOLDERS>',
    '<copyright holders>',
    '<copyright holder>',
    '[copyright holders]',
    '<AUTHOR>',
    "<author's name or designee>",
  ],
  email: ['[EMAIL]'],
  repository: ['<program>', "<one line to give the program's name and a brief idea of what it does.>"],
  year: ['<year>', '<YEAR>', '<Year>', '<yyyy>', '[YEAR]', '[Year]', '[year]', '[yyyy]', '{YEAR}', '{year}'],
};

export function fillLicense(licenseName: string, text: string, values: LicenseValues): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  const filled = lines.map((line) => {
    if (licenseName === '0BSD') {
      // 0BSD writes its placeholders as bare words, and AUTHOR appears elsewhere as a real word.
      return /Copyright \(C\) YEAR by AUTHOR EMAIL/.test(line)
        ? line.replace('YEAR', values.year).replace('AUTHOR', values.owner).replace('EMAIL', values.email)
        : line;
    }
    let result = line;
    for (const key of Object.keys(PLACEHOLDERS) as (keyof LicenseValues)[]) {
      for (const placeholder of PLACEHOLDERS[key]) result = result.split(placeholder).join(values[key]);
    }
    return result;
  });
  return `${filled.join('\n')}\n`;
}

/** Go's `%v` of a string slice, which Forgejo's messages use: `[a b c]`. */
export function goList(items: readonly string[]): string {
  return `[${items.join(' ')}]`;
}
