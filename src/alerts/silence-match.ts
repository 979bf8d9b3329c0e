/** An Alertmanager-style matcher: `name="value"`, `name!="value"`, `name=~"re"`, `name!~"re"`. */
export interface Matcher {
  name: string;
  value: string;
  is_regex: boolean;
  is_equal: boolean;
}

/** Whether every matcher holds for the labels (a missing label is the empty string, as in Alertmanager). */
export function matchesAll(labels: Record<string, string>, matchers: readonly Matcher[]): boolean {
  return matchers.every((m) => {
    const value = labels[m.name] ?? '';
    let hit: boolean;
    if (m.is_regex) {
      try {
        hit = new RegExp(`^(?:${m.value})$`).test(value); // anchored, as Alertmanager does
      } catch {
        hit = false;
      }
    } else {
      hit = value === m.value;
    }
    return m.is_equal ? hit : !hit;
  });
}

export function isSilenced(labels: Record<string, string>, silences: ReadonlyArray<{ matchers: unknown }>): boolean {
  return silences.some((s) => matchesAll(labels, s.matchers as Matcher[]));
}
