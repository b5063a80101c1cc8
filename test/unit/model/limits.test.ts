/** The ID length limits are defined once, in model/limits.ts (ADR-0011), and every check takes them from there. */
import { readdirSync, readFileSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = join(import.meta.dirname, "../../../extensions/checkpoint-bridge");
const files = (dir: string): string[] =>
	readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
		entry.isDirectory() ? files(join(dir, entry.name)) : entry.name.endsWith(".ts") ? [join(dir, entry.name)] : [],
	);

describe("ID length limits", () => {
	it("only model/limits.ts defines an id length limit; the wire, the NATS frames, the dialog host and the identity check import it", () => {
		const defining = files(ROOT)
			.filter((file) => /\bconst MAX_\w*ID_LENGTH\s*=/.test(readFileSync(file, "utf8")))
			.map((file) => relative(ROOT, file));
		expect(defining).toEqual(["model/limits.ts"]);
		for (const user of ["core/bridge/frames.ts", "transports/nats/frames.ts", "core/host/dialog/intake.ts", "core/shared/identity.ts"])
			expect(readFileSync(join(ROOT, user), "utf8"), user).toMatch(/import \{[^}]*MAX_\w*ID_LENGTH[^}]*\} from "(\.\.\/)+model\/limits\.ts"/);
	});

	it("MAX_REQUEST_ID_LENGTH and MAX_SESSION_ID_LENGTH are defined in model/limits.ts and nowhere else, nor re-exported", () => {
		const sources = files(ROOT).map((file) => ({ path: relative(ROOT, file), text: readFileSync(file, "utf8") }));
		const defined = sources.filter(({ text }) => /(REQUEST|SESSION)_ID_LENGTH\s*=/.test(text)).map(({ path }) => path);
		expect(defined).toEqual(["model/limits.ts"]);
		const reexported = sources.filter(({ text }) => /export \{[^}]*(REQUEST|SESSION)_ID_LENGTH/.test(text)).map(({ path }) => path);
		expect(reexported).toEqual([]);
	});
});
