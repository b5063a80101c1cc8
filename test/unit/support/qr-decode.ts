/**
 * Reads QR codes back with jsqr, a decoder of its own: from UTF-8 half blocks as a terminal shows
 * them (a drawn half is light, a blank one dark, as on a dark background), and from RGBA pixels.
 */
import jsQRModule from "jsqr";

// A CommonJS package whose types say `export default`: the function is the module itself or its default.
const jsQR = ((jsQRModule as unknown as { default?: typeof jsQRModule }).default ?? jsQRModule) as unknown as (
	data: Uint8ClampedArray,
	width: number,
	height: number,
	options?: { inversionAttempts?: "dontInvert" | "onlyInvert" | "attemptBoth" | "invertFirst" },
) => { data: string } | null;

/** Pixels per module side when half blocks are turned into an image. */
const SCALE = 4;
const BLOCKS = /[█▀▄]/;

/**
 * The text of the QR code drawn in `screen` (a terminal capture: the code's lines are those made of
 * half blocks and spaces only, other lines around them are ignored), or undefined when none reads.
 */
export function decodeHalfBlocks(screen: string): string | undefined {
	const lines = screen.split("\n");
	const isCodeLine = (line: string) => BLOCKS.test(line) && /^[█▀▄ ]+$/.test(line.trim()) && line.trim().length >= 21;
	const start = lines.findIndex(isCodeLine);
	if (start === -1) return undefined;
	let end = start;
	while (end < lines.length && isCodeLine(lines[end]!)) end++;
	const rows = lines.slice(start, end);
	const chars = rows.map((line) => [...line]);
	const width = Math.max(...chars.map((c) => c.length));
	// A dark border around it, as the terminal's background is.
	const pad = 2;
	const modulesWide = width + 2 * pad;
	const modulesHigh = rows.length * 2 + 2 * pad;
	const w = modulesWide * SCALE;
	const h = modulesHigh * SCALE;
	const data = new Uint8ClampedArray(w * h * 4);
	for (let i = 3; i < data.length; i += 4) data[i] = 255;
	const light = (mx: number, my: number) => {
		for (let y = my * SCALE; y < (my + 1) * SCALE; y++)
			for (let x = mx * SCALE; x < (mx + 1) * SCALE; x++) data.fill(255, (y * w + x) * 4, (y * w + x) * 4 + 3);
	};
	chars.forEach((line, r) =>
		line.forEach((ch, c) => {
			if (ch === "█" || ch === "▀") light(c + pad, 2 * r + pad);
			if (ch === "█" || ch === "▄") light(c + pad, 2 * r + 1 + pad);
		}),
	);
	return decodePixels(data, w, h);
}

/** The text of the QR code in RGBA pixels, read as they are (dark modules on light), or undefined. */
export function decodePixels(data: Uint8ClampedArray, width: number, height: number): string | undefined {
	return jsQR(data, width, height, { inversionAttempts: "dontInvert" })?.data;
}
