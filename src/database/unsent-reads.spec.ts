import { UnsentReads } from './unsent-reads';

/** Reads asked together are sent once; nothing is kept once sent, so no asker gets a read older than its asking. */
describe('UnsentReads', () => {
  let sent: string[];
  let value: number;
  const run = (key: string) => () => {
    sent.push(key);
    return Promise.resolve(value);
  };

  beforeEach(() => {
    sent = [];
    value = 1;
  });

  it('sends the same read asked within one round of the event loop once, and answers every asker', async () => {
    const reads = new UnsentReads<number>();
    const answers = Promise.all([reads.read('a', run('a')), reads.read('a', run('a')), reads.read('b', run('b')), reads.read('a', run('a'))]);
    expect(sent).toEqual([]);
    expect(await answers).toEqual([1, 1, 1, 1]);
    expect(sent).toEqual(['a', 'b']);
  });

  it('asked again once its read is sent, reads anew: a write made meanwhile is seen', async () => {
    const reads = new UnsentReads<number>();
    let release!: () => void;
    const first = reads.read('a', () => {
      sent.push('a');
      // Sent, and the database is slow to answer.
      return new Promise<number>((resolve) => (release = () => resolve(1)));
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(sent).toEqual(['a']);
    value = 2;
    const second = reads.read('a', run('a'));
    release();
    expect(await Promise.all([first, second])).toEqual([1, 2]);
    expect(sent).toEqual(['a', 'a']);
  });

  it('gives a failure to every asker of that read, and does not keep it', async () => {
    const reads = new UnsentReads<number>();
    const failing = () => {
      sent.push('a');
      return Promise.reject(new Error('the database went away'));
    };
    const answers = await Promise.allSettled([reads.read('a', failing), reads.read('a', failing)]);
    expect(answers.map((answer) => answer.status)).toEqual(['rejected', 'rejected']);
    expect(sent).toEqual(['a']);
    expect(await reads.read('a', run('a'))).toBe(1);
    expect(sent).toEqual(['a', 'a']);
  });
});
