/** The confinement table: every path form the resolver must accept or refuse, on a real tree. */
import { afterAll, describe, expect, test } from "bun:test";
import { closeSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { normalizePath, Workspace } from "./workspace-path.ts";

const base = realpathSync(mkdtempSync(join(tmpdir(), "krt-ws-path-")));
const root = join(base, "ws");
mkdirSync(join(base, "outside"));
writeFileSync(join(base, "outside", "secret.txt"), "secret");
mkdirSync(join(root, "dir", "sub"), { recursive: true });
mkdirSync(join(root, "%2e%2e"));
writeFileSync(join(root, "file.txt"), "x");
writeFileSync(join(root, "dir", "sub", "deep.txt"), "x");
const links: Array<[string, string]> = [
  ["link-in-file", "file.txt"],
  ["link-in-dir", "dir"],
  ["link-abs-in", join(root, "dir")],
  ["link-out-abs", "/etc"],
  ["link-out-rel", "../outside"],
  ["link-root", "/"],
  ["link-parent", ".."],
  ["link-self", "."],
  ["dir/link-up", ".."],
  ["dir/link-up2", "../.."],
  ["dir/link-sibling", "../file.txt"],
  ["dangling-in", "missing"],
  ["dangling-out", "/nonexistent-krt-path"],
  ["dangling-out-rel", "../nope"],
  ["chain1", "chain2"],
  ["chain2", "dir"],
  ["chainout1", "chainout2"],
  ["chainout2", "../outside"],
  ["loop1", "loop2"],
  ["loop2", "loop1"],
  ["via-outside", "../ws/dir"],
  ["abs-dotdot", `${root}/../outside`],
  ["prefix-trick", `${root}-evil/x`],
];
for (const [at, target] of links) symlinkSync(target, join(root, at));
afterAll(() => rmSync(base, { recursive: true, force: true }));

type Expect = { real: string } | { code: Code };
const ok = (real: string): Expect => ({ real });
const DENIED: Expect = { code: Code.PermissionDenied };
const MISSING: Expect = { code: Code.NotFound };

// [path, follow the final component, expected]
const table: Array<[string, boolean, Expect]> = [
  ["", true, ok("")],
  ["file.txt", true, ok("file.txt")],
  ["dir/sub/deep.txt", true, ok("dir/sub/deep.txt")],
  ["./dir//sub/./deep.txt", true, ok("dir/sub/deep.txt")],
  ["dir/sub/", true, ok("dir/sub")],
  ["new-file", true, ok("new-file")],
  ["/etc/passwd", true, DENIED],
  ["/", true, DENIED],
  [`${root}/file.txt`, true, DENIED],
  ["../outside/secret.txt", true, DENIED],
  ["dir/../../outside", true, DENIED],
  ["dir/..", true, DENIED],
  ["..", false, DENIED],
  ["file\0.txt", true, DENIED],
  ["dir/\0", false, DENIED],
  ["%2e%2e/x", true, ok("%2e%2e/x")],
  ["..%2f..%2fetc%2fpasswd", true, ok("..%2f..%2fetc%2fpasswd")],
  ["dir\\..\\..\\etc", true, ok("dir\\..\\..\\etc")],
  ["...", true, ok("...")],
  ["link-in-file", true, ok("file.txt")],
  ["link-in-file", false, ok("link-in-file")],
  ["link-in-dir/sub/deep.txt", true, ok("dir/sub/deep.txt")],
  ["link-abs-in/sub", true, ok("dir/sub")],
  ["link-out-abs/passwd", true, DENIED],
  ["link-out-abs/passwd", false, DENIED],
  ["link-out-abs", false, ok("link-out-abs")],
  ["link-out-abs", true, DENIED],
  ["link-out-rel/secret.txt", true, DENIED],
  ["link-out-rel", true, DENIED],
  ["link-root/etc/passwd", true, DENIED],
  ["link-root", true, DENIED],
  ["link-root", false, ok("link-root")],
  ["link-parent/outside/secret.txt", true, DENIED],
  ["link-parent", true, DENIED],
  ["link-self/file.txt", true, ok("file.txt")],
  ["link-self/link-self/dir/sub", true, ok("dir/sub")],
  ["dir/link-up/file.txt", true, ok("file.txt")],
  ["dir/link-up", true, ok("")],
  ["dir/link-up2/outside", true, DENIED],
  ["dir/link-sibling", true, ok("file.txt")],
  ["dangling-in", true, ok("missing")],
  ["dangling-in", false, ok("dangling-in")],
  ["dangling-in/x", true, MISSING],
  ["dangling-out", true, DENIED],
  ["dangling-out-rel", true, DENIED],
  ["chain1/sub", true, ok("dir/sub")],
  ["chainout1/secret.txt", true, DENIED],
  ["chainout1", true, DENIED],
  ["loop1/x", true, { code: Code.FailedPrecondition }],
  ["loop1", true, { code: Code.FailedPrecondition }],
  ["via-outside/sub", true, DENIED],
  ["abs-dotdot/secret.txt", true, DENIED],
  ["prefix-trick", true, DENIED],
  ["file.txt/x", true, { code: Code.FailedPrecondition }],
  ["missing/x", true, MISSING],
  ["a".repeat(256), true, { code: Code.InvalidArgument }],
];

describe("Workspace.resolve", () => {
  const workspace = new Workspace(root);
  test("the table has at least 30 rows", () => expect(table.length).toBeGreaterThanOrEqual(30));
  for (const [path, followFinal, expected] of table) {
    test(`${JSON.stringify(path)} ${followFinal ? "follow" : "nofollow"} → ${"real" in expected ? `ok ${JSON.stringify(expected.real)}` : Code[expected.code]}`, () => {
      let got: Expect;
      try {
        const resolved = workspace.resolve(path, { followFinal });
        resolved.close();
        got = ok(resolved.real);
      } catch (error) {
        if (!(error instanceof ConnectError)) throw error;
        got = { code: error.code };
      }
      if ("code" in got && "code" in expected) expect(Code[got.code]).toBe(Code[expected.code]);
      else expect(got).toEqual(expected);
    });
  }

  test("createDirs makes the missing directories on the way, never through an outside link", () => {
    const resolved = workspace.resolve("made/a/b/file", { followFinal: true, createDirs: 0o755 });
    resolved.close();
    expect(resolved.real).toBe("made/a/b/file");
    expect(() =>
      workspace.resolve("link-out-rel/new/file", { followFinal: true, createDirs: 0o755 }),
    ).toThrow(/outside the workspace/);
  });

  test("openDirectory follows inside links and refuses files and outside links", () => {
    const dir = workspace.openDirectory("link-in-dir");
    expect(dir.real).toBe("dir");
    closeSync(dir.fd);
    expect(() => workspace.openDirectory("file.txt")).toThrow(/not a directory/);
    expect(() => workspace.openDirectory("link-out-abs")).toThrow(/outside/);
  });

  test("normalizePath", () => {
    expect(normalizePath("./a//b/./")).toBe("a/b");
    expect(normalizePath("")).toBe("");
  });
});
