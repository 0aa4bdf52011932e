/**
 * docs/concepts/functions-handlers.md shows one python and one bash handler; this registers each
 * source, as written, on a real server and invokes it the ways the page describes.
 */

import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { FunctionState } from "../../api/gen/kruntimes/runtime/v1/function_pb.ts";
import { sourceTarget } from "../conformance/conformance.ts";
import { SERVER_TIMEOUT_MS, ServerProcess } from "../conformance/server-process.ts";

const root = fileURLToPath(new URL("../..", import.meta.url));
const doc = readFileSync(`${root}/docs/concepts/functions-handlers.md`, "utf8");
const encoder = new TextEncoder();
const decoder = new TextDecoder();

function testedBlock(language: string): string {
  const marker = "<!-- docs-test: runtimes/server/docs-handlers-example.test.ts";
  for (let at = doc.indexOf(marker); at !== -1; at = doc.indexOf(marker, at + 1)) {
    const match = /```(\w+)\n([\s\S]*?)```/.exec(doc.slice(at));
    if (match?.[1] === language) return match[2]!;
  }
  throw new Error(`no ${language} block after a docs-test marker`);
}

for (const language of ["python", "bash"] as const) {
  describe(`docs/concepts/functions-handlers.md ${language} handler`, () => {
    let server: ServerProcess;
    beforeAll(async () => {
      server = await ServerProcess.start(sourceTarget(language, `${root}/runtimes/server/main.ts`), {
        warmPool: 0,
      });
    }, SERVER_TIMEOUT_MS);
    afterAll(async () => {
      await server?.stop();
    }, SERVER_TIMEOUT_MS);

    test(
      "registers and answers as the page says",
      async () => {
        const f = server.binaryClients.functions;
        const runUid = `docs-${language}`;
        const { registration } = await f.register({
          runUid,
          attempt: 1,
          source: testedBlock(language),
          handler: "handle",
        });
        expect(registration?.error).toBe("");
        expect(registration?.state).toBe(FunctionState.READY);
        const invoke = (body: string, contentType = "") =>
          f.invoke({
            runUid,
            attempt: 1,
            invocationId: `inv-${body.length}`,
            body: encoder.encode(body),
            contentType,
            headers: { "x-caller": "docs" },
          });
        const empty = await invoke("");
        expect(empty.status).toBe(400);
        expect(decoder.decode(empty.body)).toBe("say something\n");
        if (language === "python") {
          const json = await invoke(JSON.stringify({ name: "Ada" }), "application/json");
          expect(json.contentType).toBe("application/json");
          expect(JSON.parse(decoder.decode(json.body))).toEqual({ hello: "Ada", calls: 2 });
          const text = await invoke("ada");
          expect([text.contentType, decoder.decode(text.body)]).toEqual(["text/plain; charset=utf-8", "ADA"]);
        } else {
          const json = await invoke("Ada");
          expect(json.contentType).toBe("application/json");
          const answer = JSON.parse(decoder.decode(json.body));
          expect(answer.greeting).toBe("hello Ada");
          expect(answer.loaded).toBeGreaterThan(0);
        }
      },
      SERVER_TIMEOUT_MS,
    );
  });
}
