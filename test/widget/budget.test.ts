import { fileURLToPath } from "node:url";
import { gzipSync } from "node:zlib";
import { Window } from "happy-dom";
import { createBuilder, type Rollup } from "vite";
import { beforeAll, describe, expect, it } from "vitest";

/**
 * The widget's size budgets, checked against a fresh build with the repository's vite.config.ts. The build
 * stays in memory (write: false): it is exactly what `vite build` writes to dist/widget/, and test runs in
 * parallel never race on the files there.
 */

const EMBED_BUDGET_GZIP_BYTES = 2048;
const configFile = fileURLToPath(new URL("../../vite.config.ts", import.meta.url));

async function buildInMemory(environment: string, fileName: string): Promise<string> {
  const builder = await createBuilder({
    configFile,
    logLevel: "warn",
    environments: { [environment]: { build: { write: false } } },
  });
  const output = (await builder.build(builder.environments[environment])) as Rollup.RollupOutput;
  const chunk = output.output.find((file) => file.fileName === fileName);
  if (chunk?.type !== "chunk") throw new Error(`the ${environment} build has no ${fileName}`);
  return chunk.code;
}

describe("embed.js as built", () => {
  let code: string;

  beforeAll(async () => {
    code = await buildInMemory("embed", "embed.js");
  });

  it(`is at most ${EMBED_BUDGET_GZIP_BYTES} bytes gzipped`, () => {
    const gzipped = gzipSync(code).length;
    console.log(`[budget] embed.js: ${code.length} bytes minified, ${gzipped} bytes gzipped`);
    expect(gzipped).toBeLessThanOrEqual(EMBED_BUDGET_GZIP_BYTES);
  });

  it("runs as a classic script on a host page and sizes the embed", async () => {
    const errors: unknown[] = [];
    const host = new Window({
      url: "https://host.example/giving",
      // The script evaluated is the one just built from this repository.
      settings: { enableJavaScriptEvaluation: true, suppressInsecureJavaScriptEnvironmentWarning: true },
      console: {
        ...console,
        error: (...args: unknown[]) => {
          if (!String(args[0]).includes("Iframe page loading is disabled")) errors.push(args);
        },
      },
    });
    try {
      const { document } = host;
      document.body.innerHTML =
        '<iframe data-almoner-form="f1" src="https://forms.example/donate/f1?embed=1" style="height:720px"></iframe>';
      const iframe = document.querySelector("iframe");
      if (!iframe) throw new Error("no iframe");
      const frameWindow = {};
      Object.defineProperty(iframe, "contentWindow", { get: () => frameWindow });
      for (let i = 0; i < 2; i++) {
        const script = document.createElement("script");
        script.textContent = code;
        document.body.append(script);
      }

      const id = iframe.getAttribute("data-almoner-embed-id");
      expect(iframe.getAttribute("src")).toBe(`https://forms.example/donate/f1?embed=1&embedId=${id}`);
      expect((host as unknown as { Almoner: { embeds: unknown[] } }).Almoner.embeds).toHaveLength(1);
      const data = { source: "almoner", version: 1, type: "resize", embedId: id, height: 1040 };
      host.dispatchEvent(new host.MessageEvent("message", { data, origin: "https://evil.example" }));
      expect(iframe.style.height).toBe("720px");
      const source = frameWindow as Window["window"];
      host.dispatchEvent(new host.MessageEvent("message", { data, origin: "https://forms.example", source }));
      expect(iframe.style.height).toBe("1040px");
      expect(errors).toEqual([]);
    } finally {
      await host.happyDOM.close();
    }
  });
});
