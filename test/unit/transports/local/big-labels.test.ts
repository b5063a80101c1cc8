/**
 * An asker label of a megabyte on the local endpoint (issue 30, finding 8): five raw same-user
 * clients each send requests whose label is 1 MB. The frame check refuses each before anything
 * reads the label, so nothing is queued or shown and a real asker is served meanwhile.
 */
import { afterEach, expect, it } from "vitest";
import { FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { MAX_SENT_LABEL_LENGTH } from "../../../../extensions/checkpoint-bridge/model/limits.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { encodeFrame } from "../../../../extensions/checkpoint-bridge/transports/local/frames.ts";
import { closePooledConnections } from "../../../../extensions/checkpoint-bridge/transports/local/pool.ts";
import { startEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { rawConnection, tokenAt } from "../../support/raw-endpoint.ts";

const cleanups: (() => Promise<unknown> | void)[] = [];
afterEach(async () => {
	closePooledConnections();
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const bigRequest = (id: string, label: string) => {
	const now = Date.now();
	return encodeFrame({
		type: "request",
		v: FRAME_VERSION.endpoint,
		id,
		asker: { label, sessionId: "flooder" },
		questions: [{ question: "Let me in?" }],
		deadline: now + 10_000,
		dialogTimeoutMs: 10_000,
		createdAt: now,
	});
};

it("five clients sending 1 MB labels are each refused as malformed naming request.asker; nothing is queued or shown, and a real asker is served", async () => {
	const handle = createHandle();
	const fake = fakeUI({ respond: (dialog) => dialog.answer("Yes") });
	claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "host" });
	const endpoint = await startEndpoint({ handle });
	cleanups.push(() => endpoint.close());
	const token = await tokenAt(endpoint.address.tokenPath);
	const label = "L".repeat(1_000_000);
	const clients = await Promise.all(
		Array.from({ length: 5 }, async (_, i) => {
			const raw = rawConnection(endpoint.endpoint);
			cleanups.push(() => void raw.socket.destroy());
			await raw.handshake(token, 100 + i);
			return raw;
		}),
	);
	for (const [i, raw] of clients.entries()) raw.send(bigRequest(`big-${i}`, label));
	const served = askRemote(endpoint.endpoint, {
		asker: { label: "planner", sessionId: "real" },
		questions: [{ question: "Go?" }],
		budgetMs: 10_000,
		dialogTimeoutMs: 10_000,
	});
	for (const raw of clients) {
		const refusal = await raw.frame((f) => f.type === "error" || f.type === "result");
		expect(refusal).toMatchObject({ type: "error", code: "malformed" });
		expect(String(refusal.message)).toContain(`request.asker must be {label, sessionId} strings of at most ${MAX_SENT_LABEL_LENGTH}`);
		await raw.closed;
	}
	expect((await served).status).toBe("ok");
	expect(fake.dialogs.map((d) => d.title)).toEqual([expect.stringContaining("Go?")]);
	expect(fake.notices.map((n) => n.message).filter((m) => m.includes("LLLL"))).toEqual([]);
});
