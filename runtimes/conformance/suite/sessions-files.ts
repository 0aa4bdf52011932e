/**
 * Session files: chunked uploads (1 KiB, 16 MiB) and streamed reads, the chunk protocol, atomic
 * commits (a reader sees the old file or the whole new one), CREATE/TRUNCATE/APPEND and modes,
 * Stat/MakeDir/Remove/Rename, and the traversal table: every path that leaves the workspace is
 * refused PERMISSION_DENIED by every RPC that takes a path, and nothing outside is touched.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { FileType, WriteMode } from "../../../api/gen/kruntimes/runtime/v1/session_pb.ts";
import { expectConnectError, type SuiteContext } from "./helpers.ts";
import { TestSession } from "./sessions-helpers.ts";

const sha = (data: Uint8Array) => createHash("sha256").update(data).digest("hex");

export function sessionFilesSuite(ctx: SuiteContext): void {
  describe("session files", () => {
    let s: TestSession;
    beforeAll(async () => {
      s = await TestSession.open(ctx.server());
    });
    afterAll(async () => {
      await s?.close();
    });

    test("write and read 1 KiB and 16 MiB (chunked both ways), offsets and lengths", async () => {
      const small = new Uint8Array(1024).map((_, i) => i % 251);
      const info = await s.write("small.bin", small);
      expect(info.size).toBe(1024n);
      expect(FileType[info.type]).toBe("FILE");
      expect((await s.read("small.bin")).data).toEqual(Buffer.from(small));

      const big = new Uint8Array(16 * 1024 * 1024);
      for (let i = 0; i < big.length; i += 4096) big[i] = (i / 4096) % 256;
      big[big.length - 1] = 7;
      const bigInfo = await s.write("dir/big.bin", big, { chunk: 1024 * 1024, parents: true });
      expect(bigInfo.size).toBe(BigInt(big.length));
      const back = await s.read("dir/big.bin");
      expect(back.data.length).toBe(big.length);
      expect(sha(back.data)).toBe(sha(big));
      expect(back.chunks).toBeGreaterThan(1);
      expect(back.info.size).toBe(BigInt(big.length));

      const slice = await s.read("small.bin", 100, 10);
      expect(slice.data).toEqual(Buffer.from(small.subarray(100, 110)));
      const tail = await s.read("small.bin", 1000);
      expect(tail.data).toEqual(Buffer.from(small.subarray(1000)));
      const past = await s.read("small.bin", 5000);
      expect(past.data.length).toBe(0);
      expect(past.info.size).toBe(1024n);
      await s.write("empty", new Uint8Array(0));
      expect((await s.read("empty")).data.length).toBe(0);
      await expectConnectError(s.read("missing"), Code.NotFound);
      await expectConnectError(s.read("dir"), Code.FailedPrecondition);
    });

    test("chunks must come in order; unknown uploads cannot be continued", async () => {
      const base = { session: s.ref, path: "ordered", uploadId: "ordered-1", mode: WriteMode.TRUNCATE };
      await s.client.writeFile({ ...base, offset: 0n, data: new Uint8Array(10) });
      await expectConnectError(
        s.client.writeFile({ ...base, offset: 5n, data: new Uint8Array(1) }),
        Code.FailedPrecondition,
      );
      await expectConnectError(
        s.client.writeFile({ ...base, offset: 20n, data: new Uint8Array(1) }),
        Code.FailedPrecondition,
      );
      await expectConnectError(
        s.client.writeFile({ ...base, path: "other", offset: 10n, data: new Uint8Array(1) }),
        Code.InvalidArgument,
      );
      const done = await s.client.writeFile({ ...base, offset: 10n, data: new Uint8Array(5), last: true });
      expect(done.received).toBe(15n);
      expect(done.info!.size).toBe(15n);
      // Committed: the id is free again and cannot be continued.
      await expectConnectError(
        s.client.writeFile({ ...base, offset: 15n, data: new Uint8Array(1), last: true }),
        Code.FailedPrecondition,
      );
      await expectConnectError(
        s.client.writeFile({ ...base, uploadId: "never-started", offset: 3n, data: new Uint8Array(1) }),
        Code.FailedPrecondition,
      );
      await expectConnectError(
        s.client.writeFile({ ...base, uploadId: "bad id", offset: 0n }),
        Code.InvalidArgument,
      );
    });

    test("commits are atomic: until the last chunk readers see the old file, then the whole new one", async () => {
      await s.write("atomic", new TextEncoder().encode("old content"));
      const base = { session: s.ref, path: "atomic", uploadId: "atomic-1", mode: WriteMode.TRUNCATE };
      const fresh = { ...base, path: "fresh", uploadId: "fresh-1" };
      let offset = 0;
      for (let i = 0; i < 4; i++) {
        const data = new TextEncoder().encode(`part${i};`);
        await s.client.writeFile({ ...base, offset: BigInt(offset), data });
        await s.client.writeFile({ ...fresh, offset: BigInt(offset), data });
        offset += data.length;
        expect((await s.read("atomic")).data.toString()).toBe("old content");
        expect(readFileSync(join(s.workspace, "atomic"), "utf8")).toBe("old content");
        await expectConnectError(s.client.stat({ session: s.ref, path: "fresh" }), Code.NotFound);
      }
      await s.client.writeFile({ ...base, offset: BigInt(offset), last: true });
      await s.client.writeFile({ ...fresh, offset: BigInt(offset), last: true });
      expect((await s.read("atomic")).data.toString()).toBe("part0;part1;part2;part3;");
      expect((await s.read("fresh")).data.toString()).toBe("part0;part1;part2;part3;");
    });

    test("CREATE, TRUNCATE, APPEND, file modes and parents", async () => {
      const enc = (t: string) => new TextEncoder().encode(t);
      await s.write("modes", enc("ab"), { mode: WriteMode.CREATE });
      await expectConnectError(s.write("modes", enc("x"), { mode: WriteMode.CREATE }), Code.AlreadyExists);
      await s.write("modes", enc("cd"), { mode: WriteMode.APPEND });
      expect((await s.read("modes")).data.toString()).toBe("abcd");
      await s.write("modes", enc("e"), { mode: WriteMode.TRUNCATE });
      expect((await s.read("modes")).data.toString()).toBe("e");
      await s.write("modes", enc("f"));
      expect((await s.read("modes")).data.toString()).toBe("f");
      await s.write("appended-new", enc("new"), { mode: WriteMode.APPEND });
      expect((await s.read("appended-new")).data.toString()).toBe("new");

      // CREATE fails at commit when the path appeared meanwhile; the other writer's file stays.
      const create = { session: s.ref, path: "raced", uploadId: "raced-1", mode: WriteMode.CREATE };
      await s.client.writeFile({ ...create, offset: 0n, data: enc("first") });
      await s.write("raced", enc("second"));
      await expectConnectError(s.client.writeFile({ ...create, offset: 5n, last: true }), Code.AlreadyExists);
      expect((await s.read("raced")).data.toString()).toBe("second");

      const secret = await s.write("secret", enc("s"), { fileMode: 0o600 });
      expect(secret.mode).toBe(0o600);
      expect((await s.write("plain", enc("p"))).mode).toBe(0o644);
      expect((await s.write("secret", enc("t"))).mode).toBe(0o600); // a replaced file keeps its mode
      await expectConnectError(s.write("no/such/dir/f", enc("x")), Code.NotFound);
      const deep = await s.write("made/on/the/way", enc("x"), { parents: true });
      expect(deep.path).toBe("made/on/the/way");
      await expectConnectError(s.write("made", enc("x")), Code.FailedPrecondition);
      await expectConnectError(s.write("", enc("x")), Code.InvalidArgument);
      // No temporary files are left behind.
      expect(readdirSync(s.workspace).filter((n) => n.startsWith(".krt-upload"))).toEqual([]);
    });

    test("Stat, MakeDir, Remove and Rename", async () => {
      const ws = await s.client.stat({ session: s.ref, path: "" });
      expect(FileType[ws.info!.type]).toBe("DIRECTORY");
      const made = await s.client.makeDir({ session: s.ref, path: "tree/a/b", parents: true, mode: 0o750 });
      expect(FileType[made.info!.type]).toBe("DIRECTORY");
      expect(made.info!.mode).toBe(0o750);
      await s.client.makeDir({ session: s.ref, path: "tree/a/b", parents: true });
      await expectConnectError(s.client.makeDir({ session: s.ref, path: "tree/a/b" }), Code.AlreadyExists);
      await expectConnectError(s.client.makeDir({ session: s.ref, path: "nope/x" }), Code.NotFound);
      await s.write("tree/a/b/file", new TextEncoder().encode("1234"));
      await s.sh("ln -s a/b/file tree/link");
      const link = await s.client.stat({ session: s.ref, path: "tree/link" });
      expect(FileType[link.info!.type]).toBe("SYMLINK");
      expect(link.info!.linkTarget).toBe("a/b/file");
      expect(link.info!.name).toBe("link");
      expect((await s.read("tree/link")).data.toString()).toBe("1234");
      const file = await s.client.stat({ session: s.ref, path: "tree//a/./b/file" });
      expect(file.info!.path).toBe("tree/a/b/file");
      expect(file.info!.size).toBe(4n);
      expect(file.info!.modifiedMicros).toBeGreaterThan(0n);

      await s.write("tree/other", new TextEncoder().encode("other"));
      await expectConnectError(
        s.client.rename({ session: s.ref, from: "tree/a/b/file", to: "tree/other" }),
        Code.AlreadyExists,
      );
      const moved = await s.client.rename({
        session: s.ref,
        from: "tree/a/b/file",
        to: "tree/other",
        overwrite: true,
      });
      expect(moved.info!.path).toBe("tree/other");
      expect((await s.read("tree/other")).data.toString()).toBe("1234");
      await s.client.rename({ session: s.ref, from: "tree/a", to: "tree/a2" });
      expect(FileType[(await s.client.stat({ session: s.ref, path: "tree/a2/b" })).info!.type]).toBe(
        "DIRECTORY",
      );
      await expectConnectError(
        s.client.rename({ session: s.ref, from: "tree/ghost", to: "tree/x" }),
        Code.NotFound,
      );
      await expectConnectError(s.client.rename({ session: s.ref, from: "", to: "x" }), Code.InvalidArgument);

      expect((await s.client.remove({ session: s.ref, path: "tree/link" })).removed).toBe(true);
      expect((await s.client.remove({ session: s.ref, path: "tree/link" })).removed).toBe(false);
      await expectConnectError(s.client.remove({ session: s.ref, path: "tree" }), Code.FailedPrecondition);
      expect((await s.client.remove({ session: s.ref, path: "tree/a2/b" })).removed).toBe(true); // empty
      expect((await s.client.remove({ session: s.ref, path: "tree", recursive: true })).removed).toBe(true);
      await expectConnectError(s.client.stat({ session: s.ref, path: "tree" }), Code.NotFound);
      await expectConnectError(
        s.client.remove({ session: s.ref, path: "", recursive: true }),
        Code.InvalidArgument,
      );
    });

    describe("traversal table", () => {
      let outside: string;
      beforeAll(async () => {
        outside = realpathSync(mkdtempSync(join(tmpdir(), "krt-outside-")));
        writeFileSync(join(outside, "secret.txt"), "secret");
        const links = [
          `ln -s ${outside} out-abs`,
          `ln -s ${outside}/secret.txt out-file`,
          `ln -s ${relativeTo(s.workspace, outside)} out-rel`,
          "ln -s / root",
          "ln -s .. parent",
          "mkdir -p dir/inner && ln -s ../.. dir/up2 && ln -s .. dir/up && echo in > dir/inner/f",
          "ln -s dir in-dir",
          "ln -s out-rel chain-out",
          "ln -s ../ws-escape via-outside",
          `ln -s ${s.workspace}/../.. abs-dotdot`,
          "ln -s /nonexistent-krt dangling-out",
          "ln -s ../nonexistent-krt dangling-out-rel",
          "ln -s loop2 loop1 && ln -s loop1 loop2",
        ];
        const run = await s.sh(links.join(" && "));
        expect(run.exited.exitCode).toBe(0);
      });
      afterAll(() => rmSync(outside, { recursive: true, force: true }));

      // Refused by every RPC that takes a path.
      const everywhere = () => [
        "/etc/passwd",
        "/",
        `${outside}/secret.txt`,
        `${s.workspace}/dir`,
        "..",
        "../x",
        "dir/../../x",
        "dir/..",
        "./../x",
        "x\0y",
        "dir/\0",
        "out-abs/secret.txt",
        "out-abs/new-file",
        "out-rel/secret.txt",
        "root/etc/passwd",
        "root/tmp",
        "parent/x",
        "dir/up2/x",
        "dir/up/../x",
        "chain-out/secret.txt",
        "via-outside/x",
        "abs-dotdot/x",
        "dangling-out/x",
        "dangling-out-rel/x",
        "in-dir/up2/x",
      ];
      // Final symlinks that leave the workspace: Stat sees the link; opening operations are refused.
      const finalLinks = [
        "out-abs",
        "out-file",
        "out-rel",
        "root",
        "parent",
        "dir/up2",
        "chain-out",
        "dangling-out",
        "dangling-out-rel",
      ];

      test("the table has at least 30 paths", () => {
        expect(everywhere().length + finalLinks.length).toBeGreaterThanOrEqual(30);
      });

      test("paths leaving the workspace are refused PERMISSION_DENIED by every RPC", async () => {
        const failures: string[] = [];
        const expectDenied = async (what: string, call: Promise<unknown>) => {
          try {
            await call;
            failures.push(`${what}: succeeded`);
          } catch (error) {
            const ce = ConnectError.from(error);
            if (ce.code !== Code.PermissionDenied)
              failures.push(`${what}: ${Code[ce.code]} ${ce.rawMessage}`);
          }
        };
        const ref = s.ref;
        const data = new TextEncoder().encode("pwned");
        for (const path of everywhere()) {
          const p = JSON.stringify(path);
          await expectDenied(`Stat ${p}`, s.client.stat({ session: ref, path }));
          await expectDenied(`ReadFile ${p}`, s.read(path));
          await expectDenied(`WriteFile ${p}`, s.write(path, data, { parents: true }));
          await expectDenied(`ListFiles ${p}`, s.client.listFiles({ session: ref, path }));
          await expectDenied(`MakeDir ${p}`, s.client.makeDir({ session: ref, path, parents: true }));
          await expectDenied(`Remove ${p}`, s.client.remove({ session: ref, path, recursive: true }));
          await expectDenied(`Rename from ${p}`, s.client.rename({ session: ref, from: path, to: "moved" }));
          await expectDenied(
            `Rename to ${p}`,
            s.client.rename({ session: ref, from: "dir/inner/f", to: path, overwrite: true }),
          );
          await expectDenied(`Exec in ${p}`, s.sh("pwd", { workingDir: path }));
          await expectDenied(
            `StartProcess in ${p}`,
            s.client.startProcess({
              session: ref,
              processId: `p${Math.random().toString(36).slice(2)}`,
              command: { program: { case: "shell", value: "pwd" } },
              workingDir: path,
            }),
          );
        }
        for (const path of finalLinks) {
          const p = JSON.stringify(path);
          const stat = await s.client.stat({ session: ref, path });
          if (FileType[stat.info!.type] !== "SYMLINK") failures.push(`Stat ${p}: not described as the link`);
          await expectDenied(`ReadFile ${p}`, s.read(path));
          await expectDenied(`WriteFile ${p}`, s.write(path, data));
          await expectDenied(`ListFiles ${p}`, s.client.listFiles({ session: ref, path }));
          await expectDenied(
            `MakeDir ${p}/x`,
            s.client.makeDir({ session: ref, path: `${path}/x`, parents: true }),
          );
          await expectDenied(`Exec in ${p}`, s.sh("pwd", { workingDir: path }));
        }
        expect(failures).toEqual([]);
        expect(readdirSync(outside)).toEqual(["secret.txt"]);
        expect(readFileSync(join(outside, "secret.txt"), "utf8")).toBe("secret");
        expect((await s.client.stat({ session: ref, path: "dir/inner/f" })).info!.size).toBe(3n);
      });

      test("links are acted on themselves: Remove and Rename of an outside link leave its target alone", async () => {
        await s.sh(`ln -s ${outside} doomed-link`);
        await s.client.rename({ session: s.ref, from: "doomed-link", to: "renamed-link" });
        expect(FileType[(await s.client.stat({ session: s.ref, path: "renamed-link" })).info!.type]).toBe(
          "SYMLINK",
        );
        expect(
          (await s.client.remove({ session: s.ref, path: "renamed-link", recursive: true })).removed,
        ).toBe(true);
        expect(readdirSync(outside)).toEqual(["secret.txt"]);
      });

      test("names that only look like traversal, and links that stay inside, are allowed", async () => {
        const enc = new TextEncoder().encode("ok");
        for (const path of [
          "%2e%2e",
          "..%2f..%2fetc%2fpasswd",
          "dir\\..\\..\\x",
          "...",
          "..hidden",
          "in-dir/inner/new",
          "dir/up/dir/inner/g",
          "./dir//inner/./h",
        ]) {
          const info = await s.write(path, enc);
          expect(info.size).toBe(2n);
          expect((await s.read(path)).data.toString()).toBe("ok");
        }
        expect(readFileSync(join(s.workspace, "dir/inner/new"), "utf8")).toBe("ok");
        expect(readFileSync(join(s.workspace, "dir/inner/g"), "utf8")).toBe("ok");
        expect(readFileSync(join(s.workspace, "%2e%2e"), "utf8")).toBe("ok");
        const listed = await s.client.listFiles({ session: s.ref, path: "in-dir/inner" });
        expect(listed.entries.map((e) => e.name)).toEqual(["f", "g", "h", "new"]);
        const pwd = await s.sh("pwd -P", { workingDir: "dir/up/in-dir" });
        expect(pwd.stdout.trim()).toBe(join(s.workspace, "dir"));
        await expectConnectError(s.read("loop1"), Code.FailedPrecondition);
      });
    });
  });
}

function relativeTo(from: string, to: string): string {
  const a = from.split("/").filter(Boolean);
  const b = to.split("/").filter(Boolean);
  let i = 0;
  while (i < a.length && i < b.length && a[i] === b[i]) i++;
  return [...a.slice(i).map(() => ".."), ...b.slice(i)].join("/");
}
