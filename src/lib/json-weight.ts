/**
 * About how many bytes a JSON value takes, written out (strings by their length, every key,
 * quote, comma and bracket counted), found by walking it rather than writing it: what a stored
 * record weighs against a quota. Its big members are strings, whose length costs nothing to read.
 */
export function jsonWeight(value: unknown): number {
  switch (typeof value) {
    case 'string':
      return value.length + 2;
    case 'number':
      return 8;
    case 'boolean':
      return 5;
    case 'object': {
      if (value === null) return 4;
      let weight = 2;
      if (Array.isArray(value)) {
        for (const item of value) weight += jsonWeight(item) + 1;
        return weight;
      }
      for (const key in value) {
        const member = (value as Record<string, unknown>)[key];
        if (member !== undefined) weight += key.length + 4 + jsonWeight(member);
      }
      return weight;
    }
    default:
      return 0;
  }
}
