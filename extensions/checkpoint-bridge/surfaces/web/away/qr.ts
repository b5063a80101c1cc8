/**
 * QR codes of the page's links: an SVG of a request's own link for the page ("open on your
 * phone"), and UTF-8 half blocks of the page's link for the terminal (`/checkpoints web qr`). The
 * `qrcode` package is loaded on the first code asked for, never before.
 */
type QrCode = typeof import("qrcode");

let loaded: Promise<QrCode> | undefined;
/** `qrcode` on first use; a failed import is tried again next time. */
function load(): Promise<QrCode> {
	loaded ??= import("qrcode").then((m) => ((m as { default?: QrCode }).default ?? m) as QrCode);
	loaded.catch(() => (loaded = undefined));
	return loaded;
}

/** Modules of quiet zone around a code: the 4 the QR standard asks for. @default 4 */
const QR_MARGIN = 4;

/** An SVG of `text` as a QR code, sized for a phone to read off a screen. */
export async function qrSvg(text: string): Promise<string> {
	const qrcode = await load();
	return qrcode.toString(text, { type: "svg", errorCorrectionLevel: "M", margin: QR_MARGIN, width: 256 });
}

/**
 * `text` as a QR code in UTF-8 half blocks, two rows of modules per line: light modules drawn
 * (`█`, `▀`, `▄`), dark ones left blank, so it reads right on a terminal's dark background in
 * its text colour. A link of the page's length (about 80 characters) is 45 columns wide.
 */
export async function qrHalfBlocks(text: string): Promise<string> {
	const qrcode = await load();
	const { modules } = qrcode.create(text, { errorCorrectionLevel: "M" });
	const size = modules.size;
	const full = size + 2 * QR_MARGIN;
	const dark = (row: number, col: number) => {
		const r = row - QR_MARGIN;
		const c = col - QR_MARGIN;
		return r >= 0 && c >= 0 && r < size && c < size && modules.get(r, c) === 1;
	};
	const lines: string[] = [];
	for (let row = 0; row < full; row += 2) {
		let line = "";
		for (let col = 0; col < full; col++) {
			const top = !dark(row, col);
			// An odd count of rows: the last line's lower half is past the code, dark like the terminal.
			const bottom = row + 1 < full && !dark(row + 1, col);
			line += top && bottom ? "█" : top ? "▀" : bottom ? "▄" : " ";
		}
		lines.push(line);
	}
	return lines.join("\n");
}
