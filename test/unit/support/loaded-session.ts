/**
 * A session of the extension module the test file itself imports (no fresh copy per session), for
 * tests that play many sessions of one copy: load and property tests.
 */
import checkpointBridge, { TOOL_NAME } from "../../../extensions/checkpoint-bridge/index.ts";
import { playSession, type SessionOptions } from "./fake-pi.ts";

export function loadedSession(options: SessionOptions) {
	const session = playSession(checkpointBridge as never, options);
	if (session.tool()?.name !== TOOL_NAME) throw new Error("the extension did not register its tool");
	return session;
}
