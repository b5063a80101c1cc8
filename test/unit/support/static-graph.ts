/** What a module loads when it loads: its static imports, followed through the extension's own files. */
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

/** Every file a module loads through static imports (type-only imports and `import()` left out), and the packages they name. */
function staticGraph(file: string, seen: Set<string>, packages: Set<string>): void {
	if (seen.has(file)) return;
	seen.add(file);
	for (const match of readFileSync(file, "utf8").matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+["']([^"']+)["']/gms)) {
		const target = match[1]!;
		if (target.startsWith(".")) staticGraph(resolve(dirname(file), target), seen, packages);
		else packages.add(target);
	}
}

/** The files `entry` loads with it, each relative to `root`. */
export function loadedWith(root: string, entry: string): string[] {
	const seen = new Set<string>();
	staticGraph(resolve(root, entry), seen, new Set());
	return [...seen].map((file) => relative(root, file));
}

/** The packages (and Node's modules) `entry` and the files it loads import statically. */
export function packagesLoadedWith(root: string, entry: string): string[] {
	const packages = new Set<string>();
	staticGraph(resolve(root, entry), new Set(), packages);
	return [...packages];
}
