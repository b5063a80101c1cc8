/**
 * Unit test files that need a process of their own; the others share one per worker (`isolate: false`, ADR-0043),
 * as starting a process per file was most of a small file's time. They clean up what they share on
 * globalThis; these cannot, or measure the process they run in.
 */
export const OWN_PROCESS = [
	"test/unit/core/copies.test.ts",
	// Tells a channel configured by a page already running: a page an earlier file left in the process would count.
	"test/unit/channels.test.ts",
	// Starts where the process has no delivery box yet: one an earlier file made would be there.
	"test/unit/core/session-box.test.ts",
	"test/unit/core/first-call-attaches.test.ts",
	// Passes alone; in one process after the files before it, its refused-answer case never ends (not yet explained).
	"test/unit/transports/local/restart.test.ts",
	// Reads which modules the extension's entry imports: one an earlier file loaded is already there.
	"test/unit/surfaces/terminal-form/lazy.test.ts",
	"test/unit/surfaces/web/commands.test.ts",
	// Counts the files in which code runs during one call: code an earlier file left running would count.
	"test/unit/road.test.ts",
	"test/unit/own-questions.test.ts",
	// The process's delivery box is made first in each of these (support/host-messages.ts): the host's session is theirs.
	"test/unit/transports/local/answer-acks.test.ts",
	"test/unit/transports/local/ask-later-exit.test.ts",
	"test/unit/transports/local/late-frames.test.ts",
	"test/unit/transports/nats/answer-acks.test.ts",
	"test/unit/transports/nats/asker.test.ts",
	"test/unit/transports/nats/late-frames.test.ts",
	"test/unit/transports/nats/room-server.test.ts",
	// A box an earlier file made would deliver that file's late ends into this file's host session, beside its audit entries.
	"test/unit/core/audit.test.ts",
	// Its sockets meet one an earlier file's server left in the process (not yet explained).
	"test/unit/mcp/http.test.ts",
] as const;
