import { defaultMergeTitle, mergeMessage, squashMessage } from './pull-merge-messages';

describe('merge messages as Forgejo writes them', () => {
  const facts = { title: 'Update lodash', index: 7, headBranch: 'renovate/lodash', baseBranch: 'main' };

  it('titles each style by default', () => {
    expect(defaultMergeTitle('merge', facts)).toBe("Merge pull request 'Update lodash' (#7) from renovate/lodash into main");
    expect(defaultMergeTitle('rebase-merge', facts)).toBe("Merge pull request 'Update lodash' (#7) from renovate/lodash into main");
    expect(defaultMergeTitle('merge', { ...facts, headRepository: 'ann/fork' })).toBe(
      "Merge pull request 'Update lodash' (#7) from ann/fork:renovate/lodash into main",
    );
    expect(defaultMergeTitle('merge', { ...facts, headRepository: null })).toBe(
      "Merge pull request 'Update lodash' (#7) from <deleted>:renovate/lodash into main",
    );
    expect(defaultMergeTitle('squash', facts)).toBe('Update lodash (#7)');
    expect(defaultMergeTitle('squash', { ...facts, externalTracker: true })).toBe('Update lodash (!7)');
    expect(defaultMergeTitle('rebase', facts)).toBe('');
  });

  it('takes the given title and appends the given body after a blank line, both trimmed', () => {
    expect(mergeMessage('merge', facts, '  My title ', ' body \n')).toBe('My title\n\nbody');
    expect(mergeMessage('squash', facts, '', undefined)).toBe('Update lodash (#7)');
    expect(mergeMessage('merge', facts, undefined, 'why')).toBe("Merge pull request 'Update lodash' (#7) from renovate/lodash into main\n\nwhy");
  });

  it('credits a squashed commit of someone else with trailers', () => {
    const ann = { name: 'Ann', email: 'ann@example.com' };
    const bob = { name: 'Bob', email: 'bob@example.com' };
    expect(squashMessage('T (#1)', ann, bob)).toBe('T (#1)\nCo-authored-by: Ann <ann@example.com>\nCo-committed-by: Ann <ann@example.com>\n');
    expect(squashMessage('T (#1)', ann, ann)).toBe('T (#1)');
  });
});
