/** The python runtime against the shared Runtime Server conformance suite. */
import { fileURLToPath } from "node:url";
import { runConformance, sourceTarget } from "../conformance/conformance.ts";
import { pythonScripts } from "../conformance/language-scripts.ts";

runConformance(
  sourceTarget("python", fileURLToPath(new URL("../server/main.ts", import.meta.url))),
  pythonScripts,
);
