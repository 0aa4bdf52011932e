/**
 * Kubernetes `$(VAR)` expansion (k8s.io/kubernetes third_party/forked/golang/expansion): `$(NAME)`
 * is replaced when NAME is defined and kept verbatim otherwise; `$$` escapes a `$`; any other `$`
 * and an unclosed `$(` stay as they are.
 */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = "";
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== "$" || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    let advance = 1;
    if (next === "$") {
      out += "$";
    } else if (next === "(") {
      const close = input.indexOf(")", cursor + 2);
      if (close < 0) {
        out += "$(";
      } else {
        const name = input.slice(cursor + 2, close);
        out += lookup(name) ?? `$(${name})`;
        advance = close - cursor;
      }
    } else {
      out += `$${next}`;
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** A lookup over several maps, first hit wins. */
export function lookupIn(
  ...maps: (Map<string, string> | Record<string, string>)[]
): (name: string) => string | undefined {
  return (name) => {
    for (const m of maps) {
      const v = m instanceof Map ? m.get(name) : Object.hasOwn(m, name) ? m[name] : undefined;
      if (v !== undefined) return v;
    }
    return undefined;
  };
}
