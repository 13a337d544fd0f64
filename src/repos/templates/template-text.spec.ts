import { assembleGitignore, expandReadme, fillLicense, goList } from './template-text';

const VALUES = {
  Name: 'anvil',
  Description: 'A code host',
  OwnerName: 'alice',
  'CloneURL.HTTPS': 'http://h/alice/anvil.git',
  'CloneURL.SSH': 'git@h:alice/anvil.git',
};

describe('README templating', () => {
  it('fills the Default template', () => {
    expect(expandReadme('# {Name}\n\n{Description}', VALUES)).toBe('# anvil\n\nA code host');
  });

  it('fills every documented placeholder and leaves unknown ones alone', () => {
    expect(expandReadme('{OwnerName} {CloneURL.HTTPS} {CloneURL.SSH} {Unknown} {{Name}}', VALUES)).toBe(
      'alice http://h/alice/anvil.git git@h:alice/anvil.git {Unknown} {anvil}',
    );
  });

  it('does not re-expand values that look like placeholders', () => {
    expect(expandReadme('{Description}', { ...VALUES, Description: '{Name}' })).toBe('{Name}');
  });
});

describe('.gitignore assembly', () => {
  it('precedes each template with its name', () => {
    expect(
      assembleGitignore([
        { name: 'Go', content: '*.exe\n' },
        { name: 'Node', content: 'node_modules/\n' },
      ]),
    ).toBe('# ---> Go\n*.exe\n\n# ---> Node\nnode_modules/\n\n');
  });
});

describe('license placeholders', () => {
  const values = { owner: 'alice', email: 'alice@example.com', repository: 'anvil', year: '2031' };

  it('fills the MIT copyright line', () => {
    expect(fillLicense('MIT', 'Copyright (c) <year> <copyright holders>\n\nPermission…', values)).toBe('Copyright (c) 2031 alice\n\nPermission…\n');
  });

  it('fills Apache and GPL style placeholders', () => {
    expect(fillLicense('Apache-2.0', 'Copyright [yyyy] [name of copyright owner]', values)).toBe('Copyright 2031 alice\n');
    expect(
      fillLicense(
        'GPL-3.0',
        "<one line to give the program's name and a brief idea of what it does.>\nCopyright (C) <year>  <name of author>\n<program>",
        values,
      ),
    ).toBe('anvil\nCopyright (C) 2031  alice\nanvil\n');
  });

  it('fills 0BSD bare words only on its copyright line', () => {
    expect(fillLicense('0BSD', 'Copyright (C) YEAR by AUTHOR EMAIL\nTHE AUTHOR DISCLAIMS', values)).toBe(
      'Copyright (C) 2031 by alice alice@example.com\nTHE AUTHOR DISCLAIMS\n',
    );
  });

  it('normalises line endings and ends with one newline', () => {
    expect(fillLicense('MIT', 'a\r\nb\r\n', values)).toBe('a\nb\n');
  });
});

describe('goList', () => {
  it("writes a list as Go's %v does", () => {
    expect(goList(['Default'])).toBe('[Default]');
    expect(goList(['a', 'b'])).toBe('[a b]');
    expect(goList([])).toBe('[]');
  });
});
