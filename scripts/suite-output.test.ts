import { describe, expect, test } from "bun:test";
import { countOf, failureExcerpts } from "./suite-output.ts";

const OUTPUT = `bun test v1.4.5

test/e2e/x.test.ts:
(pass) x > first [1.00ms]
helm: installing

 12 |   expect(r.stderr).toBe("");
                          ^
error: expect(received).toBe(expected)

Expected: ""
Received: "W1205 warning"

      at <anonymous> (/repo/test/e2e/x.test.ts:12:26)
(fail) x > second [3.00ms]
(pass) x > third [1.00ms]
error: boom
(fail) x > fourth [2.00ms]

 2 pass
 2 fail
Ran 4 tests across 1 file. [9.00ms]
`;

describe("suite output", () => {
  test("counts pass and fail lines", () => {
    expect(countOf(OUTPUT, "pass")).toBe(2);
    expect(countOf(OUTPUT, "fail")).toBe(2);
    expect(countOf("nothing", "fail")).toBe(0);
  });

  test("each failure's block runs from the previous result line to its (fail) line", () => {
    const [second, fourth, ...rest] = failureExcerpts(OUTPUT);
    expect(rest).toEqual([]);
    expect(second).toStartWith("helm: installing\n 12 |");
    expect(second).toContain('Received: "W1205 warning"');
    expect(second).toEndWith("(fail) x > second [3.00ms]");
    expect(fourth).toBe("error: boom\n(fail) x > fourth [2.00ms]");
  });

  test("a long block keeps its last lines, where the error is", () => {
    const text = [...Array.from({ length: 100 }, (_, i) => `log ${i}`), "error: late", "(fail) t [1ms]"].join(
      "\n",
    );
    const [only] = failureExcerpts(text, 5);
    expect(only).toBe(
      ["  …", "log 96", "log 97", "log 98", "log 99", "error: late", "(fail) t [1ms]"].join("\n"),
    );
  });

  test("without a (fail) line the output's tail stands in", () => {
    const text = "a\nb\n\nc\nerror: Cannot find module './gone.ts'\n";
    expect(failureExcerpts(text, 2)).toEqual(["c\nerror: Cannot find module './gone.ts'"]);
  });
});
