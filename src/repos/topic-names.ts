/** Forgejo's topic rules: at most 25 per repository, each lower-case, `^[a-z0-9][-.a-z0-9]*$`, at most 35 characters. */
export const MAX_TOPICS_PER_REPOSITORY = 25;
export const MAX_TOPIC_LENGTH = 35;
const TOPIC_PATTERN = /^[a-z0-9][-.a-z0-9]*$/;

export function isValidTopic(topic: string): boolean {
  return topic.length <= MAX_TOPIC_LENGTH && TOPIC_PATTERN.test(topic);
}

/** A topic as sent, as Forgejo reads it: trimmed and lower-cased. */
export function normalizeTopic(topic: string): string {
  return topic.trim().toLowerCase();
}

/**
 * A list of topics as sent: normalized, empty ones and repeats dropped, split into the valid ones (in the order
 * given) and the invalid ones.
 */
export function sortTopics(topics: readonly string[]): { valid: string[]; invalid: string[] } {
  const valid: string[] = [];
  const invalid: string[] = [];
  for (const raw of topics) {
    const topic = normalizeTopic(raw);
    if (topic === '' || valid.includes(topic)) continue;
    (isValidTopic(topic) ? valid : invalid).push(topic);
  }
  return { valid, invalid };
}

/** The stored form of a repository's topics (repository.topics): sorted names joined by commas. */
export function joinTopics(names: readonly string[]): string {
  return [...names].sort().join(',');
}

export function splitTopics(stored: string): string[] {
  return stored === '' ? [] : stored.split(',');
}
