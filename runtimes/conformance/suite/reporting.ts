/**
 * What an execution reports back: bounded tails with the truncation marker while the full stream
 * still flows, and the $KRUNTIME_OUTPUTS key/values with their limits (OUTPUTS_INVALID).
 */
import { describe, expect, test } from "bun:test";
import { TaskExitReason } from "../../../api/gen/kruntimes/runtime/v1/task_pb.ts";
import { tailText } from "../event-log.ts";
import { expectedBytes } from "../language-scripts.ts";
import { executeToEnd, inline, type SuiteContext } from "./helpers.ts";

const marker = /^\[\.\.\. (\d+) bytes truncated \.\.\.\]\n/;

export function reportingSuite(ctx: SuiteContext): void {
  const { scripts } = ctx;

  describe("tails and outputs", () => {
    test("long output: the stream carries every byte, the tail is bounded and marked", async () => {
      const n = 200_000;
      const { log, exited } = await executeToEnd(
        ctx.server(),
        inline(scripts.printBytes(n), { limits: { tailBytes: 1024 } }),
      );
      const full = expectedBytes(n);
      expect(log.text()).toBe(full);
      let offset = 0n;
      for (const chunk of log.outputs(1)) {
        expect(chunk.offset).toBe(offset);
        expect(chunk.data.length).toBeGreaterThan(0);
        offset += BigInt(chunk.data.length);
      }
      expect(exited.stdoutBytes).toBe(BigInt(n));
      expect(exited.stdoutTruncated).toBe(true);
      expect(exited.stdoutTail.length).toBeLessThanOrEqual(1024);
      const tail = tailText(exited.stdoutTail);
      const m = marker.exec(tail);
      expect(m).not.toBeNull();
      const kept = tail.slice(m![0].length);
      expect(Number(m![1]) + kept.length).toBe(n);
      expect(full.endsWith(kept)).toBe(true);
      expect(exited.stderrTruncated).toBe(false);
    });

    test("output that fits is not marked", async () => {
      const { exited } = await executeToEnd(
        ctx.server(),
        inline(scripts.printBytes(1024), { limits: { tailBytes: 1024 } }),
      );
      expect(exited.stdoutTruncated).toBe(false);
      expect(tailText(exited.stdoutTail)).toBe(expectedBytes(1024));
    });

    test("outputs: key=value lines, last one wins, reported with the exit", async () => {
      const { exited } = await executeToEnd(
        ctx.server(),
        inline(scripts.writeOutputs("result=ok\nurl=http://x/?a=b\nresult=final\nempty=\n")),
      );
      expect(TaskExitReason[exited.reason]).toBe("COMPLETED");
      expect(exited.outputs).toEqual({ result: "final", url: "http://x/?a=b", empty: "" });
    });

    test("outputs of a failing Run are still reported", async () => {
      const { exited } = await executeToEnd(
        ctx.server(),
        inline(`${scripts.writeOutputs("k=v\n")}${scripts.exit(3)}`),
      );
      expect(exited.exitCode).toBe(3);
      expect(exited.outputs).toEqual({ k: "v" });
    });

    const violations: Array<[string, string, object, RegExp]> = [
      ["too many keys", "a=1\nb=2\nc=3\n", { outputsMaxCount: 2 }, /more than 2 keys/],
      [
        "a value too large",
        `big=${"x".repeat(100)}\n`,
        { outputValueMaxBytes: 64 },
        /value of big is 100 bytes, the limit is 64/,
      ],
      [
        "a file too large",
        `a=${"x".repeat(50)}\nb=${"y".repeat(50)}\n`,
        { outputsMaxBytes: 80 },
        /the limit is 80/,
      ],
      ["a line without =", "ok=1\nnot a pair\n", {}, /line 2: expected key=value/],
      ["a bad key", "9lives=1\n", {}, /key "9lives"/],
    ];
    for (const [name, text, limits, message] of violations) {
      test(`outputs with ${name}: OUTPUTS_INVALID, no outputs, a message that says why`, async () => {
        const { exited } = await executeToEnd(ctx.server(), inline(scripts.writeOutputs(text), { limits }));
        expect(TaskExitReason[exited.reason]).toBe("OUTPUTS_INVALID");
        expect(exited.message).toMatch(message);
        expect(exited.outputs).toEqual({});
        expect(exited.exitCode).toBe(0);
      });
    }
  });
}
