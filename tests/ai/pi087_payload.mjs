// The request bodies pi-ai 0.87.1 builds: reads [{model, context}] as JSON on stdin, prints the bodies as a
// JSON list (each captured by onPayload, which then stops the request). Used by test_pi087_conversion.py.
import { pathToFileURL } from "node:url";
import { readFileSync } from "node:fs";

const dist = process.argv[2];
const cases = JSON.parse(readFileSync(0, "utf8"));
const out = [];
for (const { model, context } of cases) {
  const api = await import(pathToFileURL(`${dist}/api/${model.api}.js`).href);
  let captured = null;
  const events = api.stream(model, context, {
    apiKey: "k",
    onPayload: (params) => {
      captured = JSON.parse(JSON.stringify(params));
      throw new Error("captured");
    },
  });
  for await (const _ of events) { /* drain until the error ends it */ }
  out.push(captured);
}
process.stdout.write(JSON.stringify(out));
