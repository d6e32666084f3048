/**
 * A device's topic filter: empty admits everything (as does `*`, stored as empty); otherwise a
 * notification is admitted when the filter names its topic, `project/topic`, or `project/*`. The
 * fan-out statement (db/notifications/fan-out.ts) applies the same rule in SQL.
 */
export function topicAdmits(filter: readonly string[], project: string, topic: string): boolean {
  if (filter.length === 0) return true;
  return (
    filter.includes(topic) ||
    filter.includes(`${project}/${topic}`) ||
    filter.includes(`${project}/*`)
  );
}

/** Whether the filter needs the project's name to decide (it names some `project/...`). */
export function namesProjects(filter: readonly string[]): boolean {
  return filter.some((t) => t.includes("/"));
}

/**
 * A filter as stored: `*` alone admits every topic of every project, which the empty filter says;
 * each entry once. Before, `*` was accepted and stored, and admitted nothing (the fan-out matches
 * a topic, `project/topic` or `project/*`): `herald listen --topic '*'` heard nothing new.
 */
export function storedTopicFilter(topics: readonly string[]): string[] {
  return topics.includes("*") ? [] : [...new Set(topics)];
}
