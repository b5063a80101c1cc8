/** The subjects of one room. Each user's permissions can be limited to their rooms' prefix (docs/across-machines.md, ADR-0009). */

/** Every subject a room uses, under its prefix `cpb.<room>`. */
export interface RoomSubjects {
	/** Askers publish requests here, with their inbox as reply subject; the host subscribes. */
	request: string;
	/** Askers publish cancels here. */
	cancel: string;
	/** Askers heartbeat each open request here; the host answers with a pong. */
	ping: string;
	/** A would-be host asks here whether the room is already served. */
	host: string;
	/** Askers publish notices of other extensions here (no reply subject); the host subscribes. */
	notice: string;
}

/** The subjects under `prefix`. */
export function roomSubjects(prefix: string): RoomSubjects {
	return { request: `${prefix}.request`, cancel: `${prefix}.cancel`, ping: `${prefix}.ping`, host: `${prefix}.host`, notice: `${prefix}.notice` };
}
