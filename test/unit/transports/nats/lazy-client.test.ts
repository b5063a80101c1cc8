/** The NATS client is loaded only when CHECKPOINT_BRIDGE_NATS is set: no module imports it statically. */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../../../extensions/checkpoint-bridge");
const files = (dir: string): string[] =>
	readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
	);

describe("the NATS client's loading", () => {
	it("no extension module imports @nats-io statically; only broker.ts imports it, dynamically", () => {
		const sources = files(ROOT).map((file) => ({ file: relative(ROOT, file), text: readFileSync(file, "utf8") }));
		expect(sources.filter((s) => /^\s*import[^(]*from\s+["']@nats-io/m.test(s.text)).map((s) => s.file)).toEqual([]);
		expect(sources.filter((s) => /import\(\s*["']@nats-io/.test(s.text)).map((s) => s.file)).toEqual(["transports/nats/broker.ts"]);
	});

	it("the extension's entry and the root files beside it import only the NATS configuration statically; the transport itself on first use", () => {
		const roots = readdirSync(ROOT).filter((name) => name.endsWith(".ts"));
		const statics = roots.flatMap((name) =>
			[...readFileSync(join(ROOT, name), "utf8").matchAll(/^import [^;]*from "(\.\/transports\/nats\/[^"]+)"/gm)].map((m) => m[1]),
		);
		expect(new Set(statics)).toEqual(new Set(["./transports/nats/config.ts"]));
		expect(readFileSync(join(ROOT, "route.ts"), "utf8")).toMatch(/import\("\.\/transports\/nats\/index\.ts"\)/);
	});
});
