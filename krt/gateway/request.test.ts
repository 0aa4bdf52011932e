/** `krt invoke`'s request: body sources, headers and the content type it guesses. */
import { describe, expect, test } from "bun:test";
import { CliError } from "../errors.ts";
import { buildInvokeRequest, guessContentType, loadBody, parseHeaders } from "./request.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const dec = (b: Uint8Array) => new TextDecoder().decode(b);

describe("krt invoke request", () => {
  test("--data text, @file, and stdin when no --data", async () => {
    const read = async (f: string) => enc(`file:${f}`);
    expect(dec(await loadBody({ data: '{"a":1}', read }))).toBe('{"a":1}');
    expect(dec(await loadBody({ data: "@body.json", read }))).toBe("file:body.json");
    expect(dec(await loadBody({ data: "@-", read }))).toBe("file:-");
    expect(dec(await loadBody({ read, stdin: async () => enc("piped") }))).toBe("piped");
    expect((await loadBody({ read })).length).toBe(0);
    await expect(
      loadBody({
        data: "@nope",
        read: async () => {
          throw new Error("ENOENT");
        },
      }),
    ).rejects.toThrow("--data @nope: cannot read it: ENOENT");
  });

  test("headers: lower-cased names, content-type taken out as the content type", () => {
    const r = buildInvokeRequest(enc("x"), ["Content-Type: text/csv", "X-Trace:  abc "]);
    expect(r.contentType).toBe("text/csv");
    expect(r.headers).toEqual({ "x-trace": "abc" });
    expect(() => parseHeaders(["no colon"])).toThrow(CliError);
    expect(() => parseHeaders(["Authorization: Bearer x"])).toThrow(/--token/);
  });

  test("content type guessed: JSON, else octet-stream", () => {
    expect(guessContentType(enc('{"a": 1}'))).toBe("application/json");
    expect(guessContentType(enc("[1,2]"))).toBe("application/json");
    expect(guessContentType(enc("hello"))).toBe("application/octet-stream");
    expect(guessContentType(new Uint8Array([0xff, 0xfe]))).toBe("application/octet-stream");
    expect(guessContentType(new Uint8Array())).toBe("application/octet-stream");
  });
});
