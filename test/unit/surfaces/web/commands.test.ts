/**
 * The page as the extension wires it (index.ts, through the fake pi): nothing of it loads unless
 * it is turned on; CHECKPOINT_BRIDGE_WEB starts it at the claim; `/checkpoints web` and
 * `/checkpoints web off` start and stop it; the announcement, and `/checkpoints` showing it again;
 * the page outlives a host replacement and closes at quit.
 */
import http from "node:http";
import { afterEach, describe, expect, it, vi } from "vitest";
import { QR_PAGE_OFF } from "../../../../extensions/checkpoint-bridge/surfaces/web/command.ts";
import { webPageSlotExists } from "../../../../extensions/checkpoint-bridge/surfaces/web/enable.ts";
import { exposureWarning } from "../../../../extensions/checkpoint-bridge/surfaces/web/index.ts";
import { PAGE_ANNOUNCEMENT } from "../../../support/page-link.ts";
import { loadExtensionCopy, playedSessions } from "../../support/fake-pi.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { decodeHalfBlocks } from "../../support/qr-decode.ts";

const sessions = playedSessions();
afterEach(async () => {
	await sessions.shutdownAll();
	vi.unstubAllEnvs();
});

const status = (url: string) =>
	new Promise<number | string>((resolve) =>
		http
			.get(url, { agent: false }, (res) => (res.resume(), resolve(res.statusCode ?? 0)))
			.on("error", (e: NodeJS.ErrnoException) => resolve(e.code ?? "error")),
	);

async function host(sessionId = "host") {
	const fake = fakeUI();
	const s = sessions.play(await loadExtensionCopy(), { sessionId, ui: fake.ui });
	await s.start();
	const said = () => fake.notices.map((n) => n.message);
	const lastUrl = () =>
		said()
			.flatMap((m) => PAGE_ANNOUNCEMENT.exec(m)?.[1] ?? [])
			.at(-1);
	return { s, fake, said, lastUrl };
}

describe("web page commands", () => {
	// First in the file: the page's registry slot, once made, stays for the process.
	it("loads nothing of the page unless it is turned on", async () => {
		const { s, said } = await host();
		await s.command("checkpoints");
		expect(webPageSlotExists()).toBe(false);
		expect(said().join("\n")).not.toContain("answer in a browser");
	});

	it("/checkpoints web starts it and announces it, /checkpoints shows it again, /checkpoints web off stops it", async () => {
		const { s, fake, said, lastUrl } = await host();
		await s.command("checkpoints", "web");
		const url = lastUrl()!;
		expect(url).toBeDefined();
		expect(await status(url)).toBe(200);
		await s.command("checkpoints");
		expect(PAGE_ANNOUNCEMENT.exec(said().at(-1)!)?.[1]).toBe(url);
		// Running already: the same page, announced again.
		await s.command("checkpoints", "web");
		expect(lastUrl()).toBe(url);
		await s.command("checkpoints", "web off");
		expect(said().at(-1)).toBe("checkpoint-bridge: the answer page is closed; its links no longer work");
		expect(await status(url)).toBe("ECONNREFUSED");
		await s.command("checkpoints", "web off");
		expect(said().at(-1)).toBe("checkpoint-bridge: the answer page is not running");
		await s.command("checkpoints");
		expect(said().at(-1)).not.toContain("answer in a browser");
		for (const args of ["web 0.0.0.0:8787", "bogus", "web a b"]) {
			await s.command("checkpoints", args);
			expect(fake.notices.at(-1)?.type, args).toBe("warning");
		}
		expect(said().at(-3)).toContain("that listens on every interface");
		expect(said().at(-1)).toContain("/checkpoints web off stops it");
	});

	it("/checkpoints web qr shows the running page's link as a QR code that reads back as that link; with the page off it says how to turn it on", async () => {
		const { s, said, lastUrl } = await host();
		await s.command("checkpoints", "web qr");
		expect(said().at(-1)).toBe(QR_PAGE_OFF);
		expect(QR_PAGE_OFF).toContain("/checkpoints web");
		await s.command("checkpoints", "web");
		const url = lastUrl()!;
		await s.command("checkpoints", "web qr");
		const shown = said().at(-1)!;
		expect(decodeHalfBlocks(shown)).toBe(url);
		expect(shown.split("\n").at(-1)).toBe(url);
		await s.command("checkpoints", "web off");
		await s.command("checkpoints", "web qr");
		expect(said().at(-1)).toBe(QR_PAGE_OFF);
	});

	it("only the host session serves it", async () => {
		const { s } = await host("host");
		await s.command("checkpoints", "web off");
		const fake = fakeUI();
		const other = sessions.play(await loadExtensionCopy(), { sessionId: "second", ui: fake.ui });
		await other.start();
		await other.command("checkpoints", "web");
		expect(fake.notices.at(-1)).toEqual({ message: "checkpoint-bridge: only the session that holds the host role serves the answer page", type: "warning" });
	});

	it("CHECKPOINT_BRIDGE_WEB starts it at the claim; it outlives a host replacement and closes at quit", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_WEB", "127.0.0.1:0");
		const first = await host("first");
		const url = first.lastUrl()!;
		expect(await status(url)).toBe(200);
		await first.s.shutdown("new");
		expect(await status(url)).toBe(200);
		const next = await host("next");
		// The same page: no second announcement; /checkpoints shows it.
		expect(next.lastUrl()).toBeUndefined();
		await next.s.command("checkpoints");
		expect(next.lastUrl()).toBe(url);
		await next.s.shutdown("quit");
		expect(await status(url)).toBe("ECONNREFUSED");
	});

	it("a bad CHECKPOINT_BRIDGE_WEB is a warning, not a failed session", async () => {
		vi.stubEnv("CHECKPOINT_BRIDGE_WEB", "example.com:80");
		const { fake } = await host();
		expect(fake.notices.at(-1)).toEqual({
			message: 'checkpoint-bridge: cannot serve the answer page: "example.com:80": the host must be an IP address (IPv6 in brackets) or localhost',
			type: "warning",
		});
	});

	it("warns when the page can be reached from the network", () => {
		expect(exposureWarning({ host: "127.0.0.1", port: 1, loopback: true })).toBeUndefined();
		expect(exposureWarning({ host: "192.168.1.20", port: 8787, loopback: false })).toContain("reachable from the network");
	});
});
