import { makeOrg, makeRepo, makeUser, TestUser, uniqueName, withToken } from '../support/factories';
import { startTestApp, TestApp } from '../support/test-app';

describe('topics: /repos/{o}/{r}/topics, /topics/search, topic search, Repository.topics', () => {
  let t: TestApp;
  let owner: TestUser;
  let stranger: TestUser;

  beforeAll(async () => {
    t = await startTestApp();
    owner = await makeUser(t);
    stranger = await makeUser(t);
  });
  afterAll(() => t.close());

  const topicsOf = async (full: string, who: TestUser = owner) =>
    (
      await t.http
        .get(t.api(`/repos/${full}/topics`))
        .set(withToken(who.token))
        .expect(200)
    ).body.topics as string[];

  it('replaces, adds and deletes topics, normalized and sorted, and shows them in the Repository JSON', async () => {
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/topics`))
      .set(withToken(owner.token))
      .send({ topics: [' Rust ', 'go', 'go', ''] })
      .expect(204);
    expect(await topicsOf(repo.full_name)).toEqual(['go', 'rust']);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/topics/Kubernetes`))
      .set(withToken(owner.token))
      .expect(204);
    // Adding one that is there already changes nothing.
    await t.http
      .put(t.api(`/repos/${repo.full_name}/topics/go`))
      .set(withToken(owner.token))
      .expect(204);
    expect(await topicsOf(repo.full_name)).toEqual(['go', 'kubernetes', 'rust']);
    const json = await t.http
      .get(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .expect(200);
    expect(json.body.topics).toEqual(['go', 'kubernetes', 'rust']);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}/topics/rust`))
      .set(withToken(owner.token))
      .expect(204);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}/topics/rust`))
      .set(withToken(owner.token))
      .expect(404);
    expect((await t.http.get(t.api(`/repos/${repo.full_name}`)).expect(200)).body.topics).toEqual(['go', 'kubernetes']);
    const paged = await t.http.get(t.api(`/repos/${repo.full_name}/topics?limit=1&page=2`)).expect(200);
    expect(paged.body).toEqual({ topics: ['kubernetes'] });
    expect(paged.headers['x-total-count']).toBe('2');
    await t.http
      .put(t.api(`/repos/${repo.full_name}/topics`))
      .set(withToken(owner.token))
      .send({ topics: [] })
      .expect(204);
    expect(await topicsOf(repo.full_name)).toEqual([]);
  });

  it("refuses invalid topics with 422 listing them, more than 25, and non-administrators' changes", async () => {
    const repo = await makeRepo(t, owner);
    const bad = await t.http
      .put(t.api(`/repos/${repo.full_name}/topics`))
      .set(withToken(owner.token))
      .send({ topics: ['good', '-bad', 'has space', 'x'.repeat(36)] })
      .expect(422);
    expect(bad.body.message).toBe('Topic names are invalid');
    expect(bad.body.invalidTopics).toEqual(['-bad', 'has space', 'x'.repeat(36)]);
    const many = Array.from({ length: 26 }, (_, index) => `t${index}`);
    const tooMany = await t.http
      .put(t.api(`/repos/${repo.full_name}/topics`))
      .set(withToken(owner.token))
      .send({ topics: many })
      .expect(422);
    expect(tooMany.body.message).toBe('Exceeding maximum number of topics per repo');
    await t.http
      .put(t.api(`/repos/${repo.full_name}/topics`))
      .set(withToken(owner.token))
      .send({ topics: many.slice(0, 25) })
      .expect(204);
    const twentySixth = await t.http
      .put(t.api(`/repos/${repo.full_name}/topics/extra`))
      .set(withToken(owner.token))
      .expect(422);
    expect(twentySixth.body.message).toBe('Exceeding maximum allowed topics per repo.');
    const invalid = await t.http
      .put(t.api(`/repos/${repo.full_name}/topics/Not%20Valid`))
      .set(withToken(owner.token))
      .expect(422);
    expect(invalid.body).toMatchObject({ message: 'Topic name is invalid', invalidTopics: 'not valid' });
    await t.http
      .put(t.api(`/repos/${repo.full_name}/topics/ok`))
      .set(withToken(stranger.token))
      .expect(403);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/topics`))
      .set(withToken(stranger.token))
      .send({ topics: [] })
      .expect(403);
    await t.http.put(t.api(`/repos/${repo.full_name}/topics/ok`)).expect(401);
    const hidden = await makeRepo(t, owner, { private: true });
    await t.http
      .get(t.api(`/repos/${hidden.full_name}/topics`))
      .set(withToken(stranger.token))
      .expect(404);
  });

  it('/repos/search?topic=true matches topics exactly, within the caller’s visibility', async () => {
    const word = uniqueName('lang').toLowerCase();
    const exact = await makeRepo(t, owner);
    const longer = await makeRepo(t, owner);
    const hidden = await makeRepo(t, owner, { private: true });
    const org = await makeOrg(t, owner.user);
    const inOrg = await makeRepo(t, owner, { org: org.name });
    for (const [repo, topics] of [
      [exact, [word]],
      [longer, [`${word}x`]],
      [hidden, [word]],
      [inOrg, [word, 'other']],
    ] as const) {
      await t.http
        .put(t.api(`/repos/${repo.full_name}/topics`))
        .set(withToken(owner.token))
        .send({ topics })
        .expect(204);
    }
    const ids = (body: { data: { id: number }[] }) => body.data.map((repo) => repo.id).sort((a, b) => a - b);
    const mine = await t.http
      .get(t.api(`/repos/search?q=${word.toUpperCase()}&topic=true`))
      .set(withToken(owner.token))
      .expect(200);
    expect(ids(mine.body)).toEqual([exact.id, hidden.id, inOrg.id].sort((a, b) => a - b));
    expect(mine.headers['x-total-count']).toBe('3');
    const theirs = await t.http
      .get(t.api(`/repos/search?q=${word}&topic=true`))
      .set(withToken(stranger.token))
      .expect(200);
    expect(ids(theirs.body)).toEqual([exact.id, inOrg.id].sort((a, b) => a - b));
    const either = await t.http.get(t.api(`/repos/search?q=${word}x,nothing-here&topic=true`)).expect(200);
    expect(ids(either.body)).toEqual([longer.id]);
    expect(either.body.data[0].topics).toEqual([`${word}x`]);
  });

  it('/topics/search finds topics by substring, counting only repositories the caller may see', async () => {
    const word = uniqueName('kw').toLowerCase();
    const open = await makeRepo(t, owner);
    const closed = await makeRepo(t, owner, { private: true });
    const secret = await makeRepo(t, owner, { private: true });
    await t.http
      .put(t.api(`/repos/${open.full_name}/topics`))
      .set(withToken(owner.token))
      .send({ topics: [`${word}-shared`] })
      .expect(204);
    await t.http
      .put(t.api(`/repos/${closed.full_name}/topics`))
      .set(withToken(owner.token))
      .send({ topics: [`${word}-shared`] })
      .expect(204);
    await t.http
      .put(t.api(`/repos/${secret.full_name}/topics`))
      .set(withToken(owner.token))
      .send({ topics: [`${word}-secret`] })
      .expect(204);
    const forOwner = await t.http
      .get(t.api(`/topics/search?q=${word}`))
      .set(withToken(owner.token))
      .expect(200);
    expect(forOwner.body.topics.map((topic: { topic_name: string; repo_count: number }) => [topic.topic_name, topic.repo_count])).toEqual([
      [`${word}-shared`, 2],
      [`${word}-secret`, 1],
    ]);
    expect(Object.keys(forOwner.body.topics[0])).toEqual(['id', 'topic_name', 'repo_count', 'created', 'updated']);
    const anonymous = await t.http.get(t.api(`/topics/search?q=${word}`)).expect(200);
    expect(anonymous.body.topics.map((topic: { topic_name: string; repo_count: number }) => [topic.topic_name, topic.repo_count])).toEqual([
      [`${word}-shared`, 1],
    ]);
    expect(anonymous.headers['x-total-count']).toBe('1');
  });

  it('a deleted repository takes its topics with it', async () => {
    const word = uniqueName('gone').toLowerCase();
    const repo = await makeRepo(t, owner);
    await t.http
      .put(t.api(`/repos/${repo.full_name}/topics/${word}`))
      .set(withToken(owner.token))
      .expect(204);
    await t.http
      .delete(t.api(`/repos/${repo.full_name}`))
      .set(withToken(owner.token))
      .expect(204);
    const rows = await t.dataSource.query('SELECT repo_count FROM topic WHERE name = ?', [word]);
    expect(Number(rows[0].repo_count)).toBe(0);
    expect(Number((await t.dataSource.query('SELECT COUNT(*) AS n FROM repo_topic WHERE repo_id = ?', [repo.id]))[0].n)).toBe(0);
    expect(
      (
        await t.http
          .get(t.api(`/topics/search?q=${word}`))
          .set(withToken(owner.token))
          .expect(200)
      ).body.topics,
    ).toEqual([]);
  });
});
