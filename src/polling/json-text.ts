// Statement JSON for the poll's write, with answers kept as the board's own JSON text (BoardClient.read).

/** A value already as JSON text (BoardClient.read's answers): a statement's JSON takes it as is, not serialised again. */
export class JsonText {
  constructor(readonly text: string) {}
}

/** The JSON text of `rows`, with each JsonText member as its text. */
export function rowsJson(rows: Array<Record<string, unknown>>): string {
  const parts: string[] = [];
  for (const row of rows) {
    let texts = '';
    const plain: Record<string, unknown> = {};
    // for…in, not Object.entries: a poll write's rows have 16 members, and entries() builds an array for each one.
    for (const key in row) {
      const value = row[key];
      if (value instanceof JsonText) {
        texts += `,${JSON.stringify(key)}:${value.text}`;
      } else if (key === '__proto__') {
        // An assignment would set the object's prototype and drop the member; defined, it is a member like any other.
        Object.defineProperty(plain, key, { value, enumerable: true, writable: true, configurable: true });
      } else {
        plain[key] = value;
      }
    }
    const json = JSON.stringify(plain);
    if (texts === '') {
      parts.push(json);
    } else {
      // `{…}` closed after the texts; with no other member, the texts' leading comma goes.
      parts.push(json === '{}' ? `{${texts.slice(1)}}` : `${json.slice(0, -1)}${texts}}`);
    }
  }
  return `[${parts.join(',')}]`;
}
