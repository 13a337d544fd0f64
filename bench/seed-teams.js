#!/usr/bin/env node
/*
 * Adds team data to a seeded database (bench/seed-users.js + seed-repositories.js, or the comparison harness's seeder):
 * SEED_TEAMS_PER_ORG teams in each of the first SEED_TEAM_ORGS organisations (read or write, on repo.code,
 * repo.issues, repo.releases), each linked to up to SEED_TEAM_REPOS repositories of its organisation, and every
 * individual user in SEED_TEAMS_PER_USER teams (with the organisation memberships that follows). Then gives
 * SEED_TEAM_TOKENS of those users a token (hashed as Anvil hashes them) and writes them to SEED_TEAMS_FILE with,
 * for each, the repositories a team of theirs reaches (private ones first): the samples of
 * bench/team-access.bench.js. Rows are written straight into the tables, as the API would write them.
 *
 *   DATA_DIR=./data node bench/seed-teams.js          # after seeding users, organisations and repositories
 *
 * Environment: DATA_DIR / DATABASE_URL; SEED_TEAM_ORGS (1000), SEED_TEAMS_PER_ORG (50), SEED_TEAMS_PER_USER (20),
 * SEED_TEAM_REPOS (5), SEED_TEAM_TOKENS (50), SEED_TEAMS_FILE (DATA_DIR/bench-teams.json; must not exist),
 * SEED_PRNG (1).
 */
'use strict';

const fs = require('node:fs');
const path = require('node:path');
const { bounded, insertRows, loadDist, random } = require('./support');

const { loadConfig } = loadDist('config/config');
const { openDatabase } = loadDist('database/data-source');
const { generateSalt, generateToken, hashToken } = loadDist('auth/secrets');

const UNITS = ['repo.code', 'repo.issues', 'repo.releases'];

async function main() {
  const orgCount = bounded('SEED_TEAM_ORGS', 1000, 100_000);
  const perOrg = bounded('SEED_TEAMS_PER_ORG', 50, 1000);
  const perUser = bounded('SEED_TEAMS_PER_USER', 20, 1000);
  const reposPerTeam = bounded('SEED_TEAM_REPOS', 5, 1000);
  const tokenCount = bounded('SEED_TEAM_TOKENS', 50, 10_000);
  const next = random(bounded('SEED_PRNG', 1, 2 ** 31));
  const config = loadConfig(process.env);
  const file = path.resolve(process.env.SEED_TEAMS_FILE || path.join(config.dataDir, 'bench-teams.json'));
  if (fs.existsSync(file)) {
    console.error(`${file} exists: choose another SEED_TEAMS_FILE`);
    process.exit(2);
  }
  const dataSource = await openDatabase(config);
  const user = dataSource.driver.escape('user');
  const started = Date.now();
  const elapsed = () => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const pick = (list) => list[Math.floor(next() * list.length)];
  try {
    const orgs = (await dataSource.query(`SELECT id, name FROM ${user} WHERE type = 1 ORDER BY id LIMIT ${orgCount}`)).map((o) => ({
      id: Number(o.id),
      name: o.name,
    }));
    const people = (
      await dataSource.query(
        `SELECT id, name FROM ${user} WHERE type = 0 AND is_admin = 0 AND is_active = 1 AND prohibit_login = 0 AND is_restricted = 0 ORDER BY id`,
      )
    ).map((u) => ({
      id: Number(u.id),
      name: u.name,
    }));
    if (orgs.length === 0 || people.length === 0) throw new Error('seed users, organisations and repositories first');
    const orgIds = new Set(orgs.map((o) => o.id));
    const reposByOrg = new Map();
    for (const r of await dataSource.query('SELECT id, owner_id, name, is_private FROM repository ORDER BY id')) {
      const ownerId = Number(r.owner_id);
      if (!orgIds.has(ownerId)) continue;
      const list = reposByOrg.get(ownerId) ?? [];
      list.push({ id: Number(r.id), name: r.name, isPrivate: Boolean(Number(r.is_private)) });
      reposByOrg.set(ownerId, list);
    }
    const [{ maxTeam }] = await dataSource.query('SELECT MAX(id) AS maxTeam FROM team');
    let teamId = Number(maxTeam ?? 0);
    const teams = [];
    const teamRepos = [];
    const reposOfTeam = new Map();
    for (const org of orgs) {
      const orgRepos = reposByOrg.get(org.id) ?? [];
      for (let index = 0; index < perOrg; index++) {
        teamId += 1;
        const mode = next() < 0.7 ? 1 : 2;
        const units = JSON.stringify(Object.fromEntries(UNITS.map((unit) => [unit, mode])));
        teams.push({ row: [teamId, org.id, `bench-team-${index}`, `bench-team-${index}`, '', mode, 0, 0, 0, units], org });
        const linked = new Map();
        for (let n = 0; n < Math.min(reposPerTeam, orgRepos.length); n++) {
          const repo = pick(orgRepos);
          linked.set(repo.id, repo);
        }
        for (const repo of linked.values()) teamRepos.push([org.id, teamId, repo.id]);
        reposOfTeam.set(teamId, { org, repos: [...linked.values()] });
      }
    }
    const teamUsers = [];
    const orgUsers = new Map();
    const members = new Map();
    const teamsOfUser = new Map();
    for (const person of people) {
      const chosen = new Set();
      while (chosen.size < Math.min(perUser, teams.length)) chosen.add(Math.floor(next() * teams.length));
      const mine = [];
      for (const index of chosen) {
        const { row, org } = teams[index];
        teamUsers.push([org.id, row[0], person.id]);
        members.set(row[0], (members.get(row[0]) ?? 0) + 1);
        orgUsers.set(`${person.id}:${org.id}`, [person.id, org.id, 0]);
        mine.push(row[0]);
      }
      teamsOfUser.set(person.id, mine);
    }
    for (const team of teams) team.row[8] = members.get(team.row[0]) ?? 0;
    console.log(`generated ${teams.length} teams, ${teamRepos.length} team repositories, ${teamUsers.length} team members (${elapsed()})`);
    // Memberships the seed already has (Owners teams) stay; only new (uid, org) pairs are added.
    const existing = new Set((await dataSource.query('SELECT uid, org_id FROM org_user')).map((m) => `${Number(m.uid)}:${Number(m.org_id)}`));
    const newOrgUsers = [...orgUsers.entries()].filter(([key]) => !existing.has(key)).map(([, row]) => row);

    const step = Math.max(1, Math.floor(people.length / tokenCount));
    const holders = people.filter((_, index) => index % step === 0).slice(0, tokenCount);
    const now = Math.floor(Date.now() / 1000);
    const tokenRows = [];
    const samples = [];
    for (const holder of holders) {
      const reached = teamsOfUser.get(holder.id).flatMap((id) => reposOfTeam.get(id).repos.map((repo) => ({ ...repo, org: reposOfTeam.get(id).org.name })));
      if (reached.length === 0) continue;
      reached.sort((a, b) => Number(b.isPrivate) - Number(a.isPrivate));
      const plaintext = generateToken();
      const salt = generateSalt();
      tokenRows.push([holder.id, 'bench-teams', await hashToken(plaintext, salt), salt, plaintext.slice(-8), 'all', now, now]);
      samples.push({
        login: holder.name,
        token: plaintext,
        repos: reached.slice(0, 5).map((repo) => `${repo.org}/${repo.name}`),
        privateRepos: reached.filter((r) => r.isPrivate).length,
      });
    }

    await dataSource.transaction(async (tx) => {
      await insertRows(
        tx,
        'team',
        ['id', 'org_id', 'lower_name', 'name', 'description', 'authorize', 'includes_all_repositories', 'can_create_org_repo', 'num_members', 'units'],
        teams.map((t) => t.row),
      );
      await insertRows(tx, 'team_repo', ['org_id', 'team_id', 'repo_id'], teamRepos);
      await insertRows(tx, 'team_user', ['org_id', 'team_id', 'uid'], teamUsers);
      await insertRows(tx, 'org_user', ['uid', 'org_id', 'is_public'], newOrgUsers);
      await insertRows(tx, 'access_token', ['uid', 'name', 'token_hash', 'token_salt', 'token_last_eight', 'scope', 'created_unix', 'updated_unix'], tokenRows);
    });
    fs.writeFileSync(
      file,
      `${JSON.stringify({ orgs: orgs.length, teams: teams.length, teamUsers: teamUsers.length, teamRepos: teamRepos.length, samples }, null, 2)}\n`,
      { mode: 0o600 },
    );
    console.log(
      `inserted ${teams.length} teams, ${teamRepos.length} links, ${teamUsers.length} members, ${newOrgUsers.length} memberships, ${samples.length} tokens (${elapsed()}): ${file}`,
    );
  } finally {
    await dataSource.destroy();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
