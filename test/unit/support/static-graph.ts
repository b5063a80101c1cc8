/** What a module loads when it loads: its static imports, followed through the extension's own files. */
import { readFileSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";

/** Every file a module loads through static imports (type-only imports and `import()` left out). */
function staticGraph(file: string, seen = new Set<string>()): Set<string> {
	if (seen.has(file)) return seen;
	seen.add(file);
	for (const match of readFileSync(file, "utf8").matchAll(/^(?:import|export)\s+(?!type\b)[^;]*?from\s+["']([^"']+)["']/gms)) {
		const target = match[1]!;
		if (target.startsWith(".")) staticGraph(resolve(dirname(file), target), seen);
	}
	return seen;
}

/** The files `entry` loads with it, each relative to `root`. */
export function loadedWith(root: string, entry: string): string[] {
	return [...staticGraph(resolve(root, entry))].map((file) => relative(root, file));
}
