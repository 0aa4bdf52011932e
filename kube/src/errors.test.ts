import { describe, expect, test } from "bun:test";
import { KubeError, unlessNotFound } from "./errors.ts";

const fail = (code: number) => Promise.reject(new KubeError("GET", "/api/v1/x", code, {}));

describe("unlessNotFound", () => {
  test("passes the object through", async () => {
    expect(await unlessNotFound(Promise.resolve({ a: 1 }))).toEqual({ a: 1 });
  });
  test("a 404 is undefined", async () => {
    expect(await unlessNotFound(fail(404))).toBeUndefined();
  });
  test("any other error propagates", async () => {
    await expect(unlessNotFound(fail(403))).rejects.toBeInstanceOf(KubeError);
    await expect(unlessNotFound(Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  });
});
