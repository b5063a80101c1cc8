/**
 * The extension's folders are layers: model (questions, answers, limits, validation, the answer
 * check) < core (the relay) < surfaces, transports and tool (the tool's face: schema, envelope,
 * rendering) < index.ts. A lower folder never imports a higher one, and the folders of one layer
 * never import each other.
 */
import { readdirSync, readFileSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = resolve(import.meta.dirname, "../../extensions/checkpoint-bridge");
/** What each folder may import from, besides itself and packages. */
const ALLOWED: Record<string, string[]> = {
	model: [],
	core: ["model"],
	surfaces: ["model", "core"],
	transports: ["model", "core"],
	tool: ["model", "core"],
	interop: ["model", "core"],
};

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
	);
}

const layerOf = (file: string) => relative(ROOT, file).split("/")[0]!;

describe("layers", () => {
	it("every import goes down or sideways within a folder", () => {
		const violations: string[] = [];
		for (const file of sources(ROOT)) {
			const layer = layerOf(file);
			if (!(layer in ALLOWED)) continue;
			const text = readFileSync(file, "utf8");
			for (const match of text.matchAll(/(?:from|import)\s*\(?\s*["'](\.{1,2}\/[^"']+)["']/g)) {
				const target = layerOf(resolve(dirname(file), match[1]!));
				if (target !== layer && !ALLOWED[layer]!.includes(target)) violations.push(`${relative(ROOT, file)} imports ${match[1]} (${layer} → ${target})`);
			}
		}
		expect(violations).toEqual([]);
	});

	it("knows every folder of the extension", () => {
		const folders = readdirSync(ROOT, { withFileTypes: true })
			.filter((e) => e.isDirectory())
			.map((e) => e.name);
		expect(folders.sort()).toEqual(Object.keys(ALLOWED).sort());
	});
});
