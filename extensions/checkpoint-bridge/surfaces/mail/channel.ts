/** Mail as a channel (core/answering/channel.ts). */
import type { Channel } from "../../core/answering/channel.ts";
import { mailOnClaim, mailOnRelease } from "./command.ts";

export const mailChannel: Channel = { claim: mailOnClaim, release: mailOnRelease };
