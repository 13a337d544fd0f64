import { RepositoryTemplates } from './repository-templates';
import { fillLicense, LicenseValues } from './template-text';

/** Licenses are read one file at a time now; the package's all-in-one list stays the reference. */
describe('RepositoryTemplates licenses', () => {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const full = require('spdx-license-list/full') as Record<string, { licenseText: string }>;
  const templates = new RepositoryTemplates();
  templates.onModuleInit();
  const readme = { Name: 'r', Description: 'd', OwnerName: 'o', 'CloneURL.HTTPS': 'h', 'CloneURL.SSH': 's' };
  const license: LicenseValues = { owner: 'Zoë', email: 'z@example.org', repository: 'r', year: '2026' };

  it('offers exactly the licenses of the full list', () => {
    expect(templates.licenseNames()).toEqual(Object.keys(full).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0)));
  });

  it('renders every license with the text of the full list', () => {
    for (const id of templates.licenseNames()) {
      const files = templates.render({ readme: 'Default', license: id }, { readme, license });
      expect(files.find((file) => file.name === 'LICENSE')?.content).toBe(fillLicense(id, full[id].licenseText, license));
    }
  });

  it('refuses an id outside the list, including ones that would walk out of the package', () => {
    for (const id of ['NoSuchLicense', '../package', 'constructor', '__proto__']) {
      expect(() => templates.assertKnown({ readme: 'Default', license: id })).toThrow(/^license template does not exist, available templates: \[/);
      expect(() => templates.render({ readme: 'Default', license: id }, { readme, license })).toThrow(/license template does not exist/);
    }
  });
});
