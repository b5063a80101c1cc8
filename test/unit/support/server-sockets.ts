/**
 * The connections this process's servers hold open, seen through Node's `net.server.socket`
 * diagnostics channel (every TCP or Unix socket a server accepts, until it closes), by the address
 * the server listens on: a test counts what a server holds the way the operating system does,
 * without a counter of the server's own. Import it before the server accepts its first connection.
 */
import { subscribe } from "node:diagnostics_channel";
import type { AddressInfo, Server, Socket } from "node:net";

const open = new Map<Socket, string>();

/** A socket path as it is, a TCP address as `:port`. */
const keyOf = (address: string | AddressInfo | null | undefined) => (typeof address === "string" ? address : address ? `:${address.port}` : "");

subscribe("net.server.socket", (message) => {
	const { socket } = message as { socket: Socket & { server?: Server; _server?: Server } };
	// Read now: once the server closes, its address is gone.
	open.set(socket, keyOf((socket.server ?? socket._server)?.address()));
	socket.once("close", () => open.delete(socket));
});

/** The sockets open now at the server listening on `address` (a socket path, or a TCP port), its side of each connection. */
export function serverSockets(address: string | number): Socket[] {
	const key = typeof address === "number" ? `:${address}` : address;
	return [...open].filter(([, at]) => at === key).map(([socket]) => socket);
}

/** Connections open now at the server listening on `address`. */
export const openConnections = (address: string | number): number => serverSockets(address).length;

/** Bytes the server listening on `address` has written to its connections and the kernel has not taken yet, all together. */
export const unsentBytes = (address: string | number): number => serverSockets(address).reduce((sum, socket) => sum + socket.writableLength, 0);

/** The same, inside a child process's script (a string of module code): its `openConnections(address)`. */
export const OPEN_CONNECTIONS_SCRIPT = `
const { subscribe } = await import("node:diagnostics_channel");
const openSockets = new Map();
subscribe("net.server.socket", ({ socket }) => {
	const address = (socket.server ?? socket._server)?.address();
	openSockets.set(socket, typeof address === "string" ? address : address ? ":" + address.port : "");
	socket.once("close", () => openSockets.delete(socket));
});
const openConnections = (address) => [...openSockets.values()].filter((at) => at === (typeof address === "number" ? ":" + address : address)).length;
`;
