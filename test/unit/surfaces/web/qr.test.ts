/**
 * QR codes: the terminal's half blocks read back (jsqr) as exactly the link drawn, within 80
 * columns for the longest link a page can have; `qrcode` is imported by qr.ts alone, on first use.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";
import { qrHalfBlocks } from "../../../../extensions/checkpoint-bridge/surfaces/web/away/qr.ts";
import { decodeHalfBlocks } from "../../support/qr-decode.ts";

const ROOT = join(import.meta.dirname, "../../../../extensions/checkpoint-bridge");
const files = (dir: string): string[] =>
	readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory() ? files(join(dir, entry.name)) : /\.(ts|js)$/.test(entry.name) ? [join(dir, entry.name)] : [],
	);
const TOKEN = "A".repeat(43);

describe("QR codes", () => {
	it("the half blocks read back as the link, light modules drawn, within 80 columns even for the longest page link", async () => {
		for (const url of [`http://127.0.0.1:43125/t/${TOKEN}/`, `http://[fd12:3456:789a:bcde:f012:3456:789a:bcde]:65535/t/${TOKEN}/`]) {
			const code = await qrHalfBlocks(url);
			const lines = code.split("\n");
			expect(Math.max(...lines.map((l) => [...l].length)), url).toBeLessThanOrEqual(80);
			// Square: two rows of modules per line.
			expect(Math.abs(lines.length * 2 - [...lines[0]!].length)).toBeLessThanOrEqual(1);
			expect(decodeHalfBlocks(code), url).toBe(url);
			// Drawn the other way round (dark modules drawn) it is not the code a dark terminal shows.
			const inverted = code.replace(/[█▀▄ ]/g, (c) => ({ "█": " ", " ": "█", "▀": "▄", "▄": "▀" })[c]!);
			expect(decodeHalfBlocks(inverted)).toBeUndefined();
		}
	});

	it("qrcode is loaded only when a code is asked for: qr.ts alone imports it, dynamically", () => {
		const sources = files(ROOT).map((file) => ({ file: relative(ROOT, file), text: readFileSync(file, "utf8") }));
		expect(sources.filter((s) => /^\s*import[^(]*from\s+["']qrcode["']/m.test(s.text)).map((s) => s.file)).toEqual([]);
		expect(sources.filter((s) => /import\(\s*["']qrcode["']\s*\)/.test(s.text)).map((s) => s.file)).toEqual(["surfaces/web/away/qr.ts"]);
	});
});
