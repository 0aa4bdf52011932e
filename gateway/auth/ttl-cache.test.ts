import { describe, expect, test } from "bun:test";
import { TtlCache } from "./ttl-cache.ts";

function clocked(maxSize: number) {
  let t = 0;
  const cache = new TtlCache<string>({ maxSize, now: () => t });
  return { cache, advance: (ms: number) => (t += ms) };
}

describe("TtlCache", () => {
  test("an entry lives exactly its own TTL", () => {
    const { cache, advance } = clocked(10);
    cache.set("allow", "a", 60_000);
    cache.set("deny", "d", 5_000);
    advance(4_999);
    expect(cache.get("deny")).toBe("d");
    advance(1);
    expect(cache.get("deny")).toBeUndefined();
    expect(cache.get("allow")).toBe("a");
    advance(55_000);
    expect(cache.get("allow")).toBeUndefined();
    expect(cache.size).toBe(0);
  });

  test("size is bounded; the least recently used goes first", () => {
    const { cache } = clocked(2);
    cache.set("a", "1", 1000);
    cache.set("b", "2", 1000);
    expect(cache.get("a")).toBe("1"); // a is now the most recent
    cache.set("c", "3", 1000);
    expect(cache.size).toBe(2);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toBe("1");
    expect(cache.get("c")).toBe("3");
  });

  test("a zero TTL or zero size caches nothing", () => {
    const { cache } = clocked(5);
    cache.set("a", "1", 0);
    expect(cache.get("a")).toBeUndefined();
    const none = new TtlCache<string>({ maxSize: 0 });
    none.set("a", "1", 1000);
    expect(none.get("a")).toBeUndefined();
  });

  test("setting a key again replaces value and TTL", () => {
    const { cache, advance } = clocked(5);
    cache.set("k", "deny", 5);
    cache.set("k", "allow", 100);
    advance(50);
    expect(cache.get("k")).toBe("allow");
  });
});
