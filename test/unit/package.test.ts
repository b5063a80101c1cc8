/**
 * package.json by pi's rules (pi's docs/packages.md, "Declare dependencies"): the packages pi supplies
 * are "*" peers, never dependencies; dependencies are exactly what the extension loads at run time and
 * pi does not supply. The installed package on the real pi is test/integration/install.test.ts.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { SUPPORTED_PI_LINES } from "../../extensions/checkpoint-bridge/supported-pi.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const EXTENSION_DIR = join(ROOT, "extensions/checkpoint-bridge");
/** What pi supplies to extensions (packages.md, "Declare dependencies"). */
const HOST_PROVIDED = ["@earendil-works/pi-agent-core", "@earendil-works/pi-ai", "@earendil-works/pi-coding-agent", "@earendil-works/pi-tui", "typebox"];

interface Manifest {
	dependencies?: Record<string, string>;
	peerDependencies?: Record<string, string>;
	peerDependenciesMeta?: Record<string, { optional?: boolean }>;
	pi?: { extensions?: string[] };
	types?: string;
	exports?: Record<string, unknown>;
	files?: string[];
	scripts?: Record<string, string>;
}
const manifest = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as Manifest;

function sources(dir: string): string[] {
	return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory() ? sources(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
	);
}

/** The package a bare specifier names (`@scope/name/sub` → `@scope/name`); undefined for builtins and relative paths. */
function packageOf(specifier: string): string | undefined {
	if (specifier.startsWith(".") || specifier.startsWith("node:")) return undefined;
	const parts = specifier.split("/");
	return specifier.startsWith("@") ? parts.slice(0, 2).join("/") : parts[0];
}

/** Packages the extension loads at run time: static imports and re-exports that are not type-only, dynamic imports, and `require` (made by createRequire). */
function runtimeImports(): Set<string> {
	const found = new Set<string>();
	const patterns = [
		/^\s*(?:import|export)\s+(?!type\b)(?:[^;]*?\bfrom\s*)?["']([^"']+)["']/gm,
		/\bimport\s*\(\s*["']([^"']+)["']\s*\)/g,
		/\brequire\s*\(\s*["']([^"']+)["']\s*\)/g,
		// A package loaded through Node's own loader (core/shared/shared-handle.ts, ADR-0040).
		/\bcreateRequire\([^)]*\)\s*\(\s*["']([^"']+)["']\s*\)/g,
	];
	for (const file of sources(EXTENSION_DIR)) {
		const text = readFileSync(file, "utf8");
		for (const pattern of patterns)
			for (const match of text.matchAll(pattern)) {
				const name = packageOf(match[1]!);
				if (name) found.add(name);
			}
	}
	return found;
}

describe("package.json", () => {
	it('declares every package pi supplies as a "*" peer and none of them as a dependency', () => {
		expect(Object.keys(manifest.dependencies ?? {}).filter((name) => HOST_PROVIDED.includes(name))).toEqual([]);
		for (const name of HOST_PROVIDED) expect(manifest.peerDependencies?.[name], name).toBe("*");
	});

	it("marks a peer optional exactly when the extension runs without it (no run-time import)", () => {
		const imported = runtimeImports();
		for (const name of Object.keys(manifest.peerDependencies ?? {}))
			expect(manifest.peerDependenciesMeta?.[name]?.optional === true, `${name} optional`).toBe(!imported.has(name));
	});

	it("depends on exactly the packages the extension loads at run time that pi does not supply", () => {
		const needed = [...runtimeImports()].filter((name) => !HOST_PROVIDED.includes(name)).sort();
		expect(Object.keys(manifest.dependencies ?? {}).sort()).toEqual(needed);
	});

	it("names the extension's entry point for pi", () => {
		expect(manifest.pi?.extensions).toEqual(["./extensions/checkpoint-bridge/index.ts"]);
	});

	it("the entry point only registers: 120 lines at most, its one function the factory pi calls", () => {
		const entry = readFileSync(join(EXTENSION_DIR, "index.ts"), "utf8");
		expect(entry.split("\n").length - 1).toBeLessThanOrEqual(120);
		expect([...entry.matchAll(/^(?:export )?(?:default )?(?:async )?function\b/gm)]).toHaveLength(1);
	});

	it("publishes the observer contract as checkpoint-bridge/observers (and the bare name): declarations built from observers.ts when packed, the source to load", () => {
		const observers = { types: "./types/observers.d.ts", default: "./extensions/checkpoint-bridge/observers.ts" };
		expect(manifest.exports).toEqual({ ".": observers, "./observers": observers, "./package.json": "./package.json" });
		expect(manifest.types).toBe("./types/observers.d.ts");
		expect(manifest.files).toContain("types");
		expect(manifest.scripts?.prepack).toBe("npm run types");
		const config = JSON.parse(readFileSync(join(ROOT, manifest.scripts!.types!.replace("tsc -p ", "")), "utf8")) as {
			files: string[];
			compilerOptions: { outDir: string; rootDir: string };
		};
		expect(config.files).toEqual(["extensions/checkpoint-bridge/observers.ts"]);
		expect(config.compilerOptions).toMatchObject({ outDir: "types", rootDir: "extensions/checkpoint-bridge" });
	});

	it("the observer module only re-exports: every name comes from the module that defines it", () => {
		const code = readFileSync(join(EXTENSION_DIR, "observers.ts"), "utf8")
			.replace(/\/\*\*[\s\S]*?\*\//g, "")
			// Mutation testing's sandbox marks every file it copies so: not a line of the module.
			.replace(/^\s*\/\/ @ts-nocheck\s*$/m, "")
			.trim();
		for (const line of code.split(/\n+/)) expect(line).toMatch(/^export (type )?\{[^}]+\} from "\.\/(core\/shared|model)\/[a-z-]+\.ts";$/);
	});
});

describe("docs/limits.md", () => {
	it("states the pi versions the extension checks it runs on", () => {
		const limits = readFileSync(join(ROOT, "docs/limits.md"), "utf8");
		const stated = SUPPORTED_PI_LINES.map((line) => `${line}.x`).join(" and ");
		expect(limits).toContain(`Supported pi: \`@earendil-works/pi-coding-agent\` ${stated}`);
	});
});
