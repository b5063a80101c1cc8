/** A host role in this process serving a local endpoint: what the endpoint's tests start from. */

import type { RequestBook } from "../../../extensions/checkpoint-bridge/core/host/book.ts";
import { claimHostRole } from "../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { type EndpointOptions, startEndpoint } from "../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { dialogFeed } from "./dialog-feed.ts";
import { fakeUI } from "./fake-ui.ts";

/**
 * A fresh handle whose host role (session `sessionId`, pi's dialogs on a fake UI, each dialog in
 * `feed` as it opens, timed-out requests kept late in `book` when given) serves a local endpoint started
 * with `options`; `cleanups` gets its close.
 */
export async function hostWithEndpoint(
	cleanups: (() => unknown)[],
	{ sessionId = "host-session", book, ...options }: Partial<Omit<EndpointOptions, "handle">> & { sessionId?: string; book?: RequestBook } = {},
) {
	const handle = createHandle();
	const feed = dialogFeed();
	const fake = fakeUI({ respond: feed.respond });
	const role = claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId, ...(book ? { book } : {}) });
	if (!role) throw new Error("a fresh handle must accept the claim");
	const endpoint = await startEndpoint({ handle, ...options });
	cleanups.push(() => endpoint.close());
	return { handle, fake, feed, role, endpoint };
}
