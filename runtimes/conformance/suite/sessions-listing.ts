/**
 * ListFiles paging: 3, 1,000 and 10,000 entries with page sizes 1, 7 and the maximum, every
 * entry exactly once in UTF-8 byte order (multi-byte names where byte order and JS string order
 * differ), the default and maximum page sizes, entries added and removed between pages, and
 * tokens of another directory or session, altered or made up, refused INVALID_ARGUMENT.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { Code } from "@connectrpc/connect";
import { FileType } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { SessionLimits } from "../../../api/src/constants.ts";
import { expectConnectError, type SuiteContext } from "./helpers.ts";
import { TestSession } from "./sessions-helpers.ts";

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a), Buffer.from(b));

async function listAll(
  s: TestSession,
  path: string,
  limit: number,
): Promise<{ names: string[]; pages: number }> {
  const names: string[] = [];
  let token = "";
  let pages = 0;
  do {
    const page = await s.client.listFiles({ session: s.ref, path, limit, pageToken: token });
    pages++;
    expect(page.entries.length).toBeLessThanOrEqual(limit);
    if (page.nextPageToken !== "") expect(page.entries.length).toBe(limit);
    for (const e of page.entries) names.push(e.name);
    token = page.nextPageToken;
  } while (token !== "");
  return { names, pages };
}

export function sessionListingSuite(ctx: SuiteContext): void {
  describe("session listing", () => {
    let s: TestSession;
    const expected = new Map<string, string[]>();
    beforeAll(async () => {
      s = await TestSession.open(ctx.server());
      for (const count of [3, 1000, 10_000]) {
        // One shell loop creates the entries (a mix of files and directories).
        const run = await s.sh(
          `mkdir d${count} && cd d${count} && for i in $(seq 1 ${count}); do if [ $((i % 10)) = 0 ]; then mkdir "e$i"; else : > "e$i"; fi; done`,
        );
        expect(run.exited.exitCode).toBe(0);
        const names: string[] = [];
        for (let i = 1; i <= count; i++) names.push(`e${i}`);
        expected.set(`d${count}`, names.sort(byBytes));
      }
    }, 120_000);
    afterAll(async () => {
      await s?.close();
    });

    for (const count of [3, 1000, 10_000]) {
      for (const size of [1, 7, SessionLimits.maxListLimit]) {
        // 10,000 one-entry pages (10,000 calls, ~8 s a language) prove nothing 1,000 do not.
        if (count / size > 2000) continue;
        test(`${count} entries in pages of ${size}: each once, in byte order`, async () => {
          const { names, pages } = await listAll(s, `d${count}`, size);
          expect(names).toEqual(expected.get(`d${count}`)!);
          expect(pages).toBe(Math.max(1, Math.ceil(count / size)));
        }, 300_000);
      }
    }

    test("entries describe themselves; default and maximum page sizes", async () => {
      const first = await s.client.listFiles({ session: s.ref, path: "d1000" });
      expect(first.entries).toHaveLength(SessionLimits.defaultListLimit);
      expect(first.entries[0]!.path).toBe(`d1000/${first.entries[0]!.name}`);
      const dir = first.entries.find((e) => e.name === "e10")!;
      expect(FileType[dir.type]).toBe("DIRECTORY");
      const file = first.entries.find((e) => e.name === "e1")!;
      expect(FileType[file.type]).toBe("FILE");
      const capped = await s.client.listFiles({ session: s.ref, path: "d10000", limit: 5000 });
      expect(capped.entries).toHaveLength(SessionLimits.maxListLimit);
      const all3 = await s.client.listFiles({ session: s.ref, path: "d3", limit: 3 });
      expect(all3.entries).toHaveLength(3);
      expect(all3.nextPageToken).toBe("");
      const root = await s.client.listFiles({ session: s.ref, path: "" });
      expect(root.entries.map((e) => e.path)).toEqual(["d1000", "d10000", "d3"]);
    });

    test("multi-byte UTF-8 names come in byte order, not JS string order", async () => {
      const names = ["z", "é", "日本", "\u{FF5E}", "\u{1F600}", "A", "a", "e\u0301", "ß"];
      await s.client.makeDir({ session: s.ref, path: "utf8" });
      for (const name of names) await s.write(`utf8/${name}`, new Uint8Array(0));
      const bytes = [...names].sort(byBytes);
      const js = [...names].sort();
      expect(bytes).not.toEqual(js); // the set really tells the two orders apart
      for (const size of [1, 2, 1000]) {
        const { names: listed } = await listAll(s, "utf8", size);
        expect(listed).toEqual(bytes);
      }
    });

    test("a token resumes after its name when entries are added and removed between pages", async () => {
      await s.client.makeDir({ session: s.ref, path: "moving" });
      const initial = Array.from({ length: 20 }, (_, i) => `f${String(i).padStart(2, "0")}`);
      for (const name of initial) await s.write(`moving/${name}`, new Uint8Array(0));
      const page1 = await s.client.listFiles({ session: s.ref, path: "moving", limit: 5 });
      expect(page1.entries.map((e) => e.name)).toEqual(["f00", "f01", "f02", "f03", "f04"]);
      // Remove the last name returned and the next one; add names before and after the cursor.
      await s.client.remove({ session: s.ref, path: "moving/f04" });
      await s.client.remove({ session: s.ref, path: "moving/f05" });
      await s.write("moving/a-before", new Uint8Array(0));
      await s.write("moving/f041", new Uint8Array(0));
      await s.write("moving/f99", new Uint8Array(0));
      const page2 = await s.client.listFiles({
        session: s.ref,
        path: "moving",
        limit: 5,
        pageToken: page1.nextPageToken,
      });
      expect(page2.entries.map((e) => e.name)).toEqual(["f041", "f06", "f07", "f08", "f09"]);
      await s.client.remove({ session: s.ref, path: "moving/f10" });
      const rest: string[] = [];
      let token = page2.nextPageToken;
      while (token !== "") {
        const page = await s.client.listFiles({ session: s.ref, path: "moving", limit: 5, pageToken: token });
        rest.push(...page.entries.map((e) => e.name));
        token = page.nextPageToken;
      }
      expect(rest).toEqual(["f11", "f12", "f13", "f14", "f15", "f16", "f17", "f18", "f19", "f99"]);
    });

    test("tokens of another directory or session, altered or made up, are refused", async () => {
      const page = await s.client.listFiles({ session: s.ref, path: "d1000", limit: 7 });
      const token = page.nextPageToken;
      expect(token).not.toBe("");
      // The same directory spelled differently is the same directory.
      const same = await s.client.listFiles({ session: s.ref, path: "./d1000/", limit: 7, pageToken: token });
      expect(same.entries).toHaveLength(7);
      await expectConnectError(
        s.client.listFiles({ session: s.ref, path: "d3", pageToken: token }),
        Code.InvalidArgument,
      );
      await expectConnectError(
        s.client.listFiles({ session: s.ref, path: "", pageToken: token }),
        Code.InvalidArgument,
      );
      const other = await TestSession.open(ctx.server());
      try {
        await other.sh("mkdir d1000");
        await expectConnectError(
          other.client.listFiles({ session: other.ref, path: "d1000", pageToken: token }),
          Code.InvalidArgument,
        );
      } finally {
        await other.close();
      }
      const flipped = token.slice(0, 5) + (token[5] === "A" ? "B" : "A") + token.slice(6);
      for (const bad of ["garbage", "x.y", `${token}x`, flipped, "."]) {
        await expectConnectError(
          s.client.listFiles({ session: s.ref, path: "d1000", pageToken: bad }),
          Code.InvalidArgument,
        );
      }
      await expectConnectError(
        s.client.listFiles({ session: s.ref, path: "d3/e1" }),
        Code.FailedPrecondition,
      );
      await expectConnectError(s.client.listFiles({ session: s.ref, path: "missing" }), Code.NotFound);
    });
  });
}
